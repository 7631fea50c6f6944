import { describe, expect, it } from "vitest";
import { envName, resolveSettings } from "../../src/settings-resolution.js";

describe("settings", () => {
  it("has documented defaults (durations in seconds)", () => {
    expect(resolveSettings({}, {})).toMatchObject({
      databaseUrl: "sqlite:./soniq.db",
      concurrency: 10,
      shutdownTimeout: 30,
      jobTimeout: 300,
      heartbeatInterval: 5,
      heartbeatTimeout: 30,
      maxAttempts: 5,
      queues: null,
      rejectUnknownJobs: true,
      logArgs: false,
    });
  });

  it("reads SONIQ_* variables and lets code options win", () => {
    const env = {
      SONIQ_DATABASE_URL: "memory:",
      SONIQ_CONCURRENCY: "4",
      SONIQ_SHUTDOWN_TIMEOUT: "12.5",
      SONIQ_JOB_TIMEOUT: "0",
      SONIQ_HEARTBEAT_INTERVAL: "2",
      SONIQ_QUEUES: "a, b",
      SONIQ_LOG_ARGS: "true",
      SONIQ_MAX_PAYLOAD_BYTES: "2048",
      SONIQ_SYNC_HANDLER_GRACE_SECONDS: "45",
      SONIQ_SYNC_HANDLER_POOL_SIZE: "3",
      PATH: "/usr/bin",
    };
    expect(resolveSettings({}, env)).toMatchObject({
      databaseUrl: "memory:",
      concurrency: 4,
      shutdownTimeout: 12.5,
      jobTimeout: 0,
      heartbeatInterval: 2,
      queues: ["a", "b"],
      logArgs: true,
      maxPayloadBytes: 2048,
      syncHandlerGraceSeconds: 45,
      syncHandlerPoolSize: 3,
    });
    expect(
      resolveSettings({}, { SONIQ_SYNC_HANDLER_GRACE_SECONDS: "" }).syncHandlerGraceSeconds,
    ).toBeNull();
    expect(resolveSettings({ concurrency: 7 }, env).concurrency).toBe(7);
  });

  it("rejects unknown options, unknown SONIQ_* variables and out-of-range values with a code", () => {
    expect(() => resolveSettings({ concurency: 3 }, {})).toThrow(/INVALID_OPTION.*concurency/);
    expect(() => resolveSettings({}, { SONIQ_CONCURENCY: "3" })).toThrow(
      /INVALID_OPTION.*SONIQ_CONCURENCY/,
    );
    expect(() => resolveSettings({ concurrency: 0 }, {})).toThrow(/INVALID_OPTION.*concurrency/);
    expect(() => resolveSettings({}, { SONIQ_SHUTDOWN_TIMEOUT: "soon" })).toThrow(
      /SONIQ_SHUTDOWN_TIMEOUT/,
    );
    expect(() => resolveSettings({ shutdownTimeout: -1 }, {})).toThrow(/shutdownTimeout/);
    expect(() => resolveSettings({ schema: "Bad-Name" }, {})).toThrow(/schema/);
    expect(() => resolveSettings({}, { SONIQ_LOG_ARGS: "maybe" })).toThrow(/SONIQ_LOG_ARGS/);
    expect(() => resolveSettings({}, { SONIQ_CONCURRENCY: "0x10" })).toThrow(/SONIQ_CONCURRENCY/);
    expect(() => resolveSettings({ schema: "pg_catalog" }, {})).toThrow(/system schema/);
    expect(() => resolveSettings({ heartbeatInterval: 10, heartbeatTimeout: 5 }, {})).toThrow(
      /heartbeatTimeout.*longer than heartbeatInterval/,
    );
  });

  it("reads the pooler and the LISTEN URL (SONIQ_POOLER, SONIQ_LISTEN_URL), validated", () => {
    expect(resolveSettings({}, {})).toMatchObject({ pooler: "none", listenUrl: null });
    const direct = "postgres://app@db:5432/app";
    expect(
      resolveSettings({}, { SONIQ_POOLER: "transaction", SONIQ_LISTEN_URL: direct }),
    ).toMatchObject({ pooler: "transaction", listenUrl: direct });
    expect(resolveSettings({}, { SONIQ_LISTEN_URL: "" }).listenUrl).toBeNull();
    expect(() => resolveSettings({}, { SONIQ_POOLER: "statement" })).toThrow(
      /INVALID_OPTION.*SONIQ_POOLER/,
    );
    expect(() => resolveSettings({ listenUrl: "db:5432" }, {})).toThrow(
      /INVALID_OPTION.*listenUrl.*postgres:\/\//,
    );
  });

  it("names environment variables in SCREAMING_SNAKE_CASE", () => {
    expect(envName("databaseUrl")).toBe("SONIQ_DATABASE_URL");
    expect(envName("syncHandlerPoolSize")).toBe("SONIQ_SYNC_HANDLER_POOL_SIZE");
  });
});
