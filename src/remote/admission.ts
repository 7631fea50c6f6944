/**
 * Checks the admission budget given to `soniq.remoteJob`. The budget and the decision the stores
 * take with it are words of the backend contract (src/backends/contract/admission.ts).
 */
import type { AdmissionBudget } from "../backends/contract/admission.js";
import { SoniqError } from "../errors.js";

/**
 * Checks a budget given to `soniq.remoteJob`.
 * @throws SoniqError `INVALID_OPTION` for a field that is not an integer >= 1 or an unknown field.
 */
export function assertAdmissionBudget(budget: unknown, job: string): AdmissionBudget {
  if (typeof budget !== "object" || budget === null) {
    throw new SoniqError("INVALID_OPTION", `job ${job}: admission must be an object`);
  }
  for (const [key, value] of Object.entries(budget)) {
    if (key !== "maxConcurrent" && key !== "perMinute") {
      throw new SoniqError("INVALID_OPTION", `job ${job}: unknown admission option ${key}`);
    }
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 1)) {
      throw new SoniqError(
        "INVALID_OPTION",
        `job ${job}: admission.${key} must be an integer >= 1`,
      );
    }
  }
  return budget as AdmissionBudget;
}
