/**
 * The backend contract's one import point: re-exports of `contract/*`.
 *
 * @internal Not a stable public API.
 */
export * from "./admin-store.js";
export type { Backend, BackendKind } from "./backend.js";
export type { Capabilities } from "./capabilities.js";
export type * from "./finish-notices.js";
export type * from "./flow-store.js";
export type * from "./hand-off.js";
export type * from "./job-store.js";
export type * from "./lease-store.js";
export type * from "./notifier.js";
export type * from "./schedule-store.js";
export * from "./submission-store.js";
export * from "./types.js";
export * from "./worker-store.js";
