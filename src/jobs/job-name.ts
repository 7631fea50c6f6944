import { SoniqError } from "../errors.js";

/** Job names are dotted lower-case: `email.send`, `files.digest_v2`. At most 200 characters. */
export const JOB_NAME_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;

/**
 * Checks a job name.
 * @throws SoniqError `INVALID_JOB_NAME` when it is not dotted lower-case or is too long.
 */
export function assertJobName(name: unknown): asserts name is string {
  if (typeof name !== "string" || name.length > 200 || !JOB_NAME_PATTERN.test(name)) {
    throw new SoniqError(
      "INVALID_JOB_NAME",
      `job name ${JSON.stringify(name)} must be dotted lower-case (letters, digits, _), e.g. "email.send", at most 200 characters`,
    );
  }
}

/** Queue names: 1–100 of letters, digits and `_ . : -`. */
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;
