/**
 * The audit of dashboard writes: every write (allowed or refused after the access check) produces
 * exactly one record — a `dashboard_action` log line, a `dashboard_action` event on the instance's
 * bus, and the caller's `audit` hook.
 */
import type { DashboardActionEvent } from "../observability/events.js";
import type { DashboardSource } from "./source.js";

/** One audited write (the payload of the `dashboard_action` event). */
export type AuditRecord = DashboardActionEvent;

/** Writes `record` to the logger, the event bus and `hook`; a throwing hook is logged, not raised. */
export function audit(
  soniq: DashboardSource,
  hook: ((record: AuditRecord) => void) | undefined,
  record: AuditRecord,
): void {
  soniq.logger.info({ ...record, event: "dashboard_action" }, "dashboard_action");
  soniq.eventBus.emit("dashboard_action", record);
  if (!hook) return;
  try {
    hook(record);
  } catch (err) {
    soniq.logger.error({ err }, "the dashboard's audit hook threw");
  }
}
