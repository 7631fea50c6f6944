/**
 * The "did you mean …" hint of a name that is not known: the closest known name by edit distance
 * (insertions, deletions, substitutions), when it is close enough to be a typo.
 */

/** Edit distance between `a` and `b` (Levenshtein). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The known name closest to `name`, or null when none is within a typo's reach: at most 2 edits
 * (a swapped pair of letters is 2), and fewer edits than `name` has letters (so "a" does not
 * suggest "b").
 */
export function closestName(name: string, known: Iterable<string>): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance || (d === bestDistance && best !== null && candidate < best)) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= 2 && bestDistance < name.length ? best : null;
}
