/**
 * One JSON object per line on stdout, each with a `component`. Levels filter at the source so a
 * debug line costs nothing when the level is info.
 */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(component: string): Logger;
  readonly level: LogLevel;
}

export type LogSink = (line: string) => void;

const stdoutSink: LogSink = (line) => process.stdout.write(line + "\n");

export function createLogger(level: LogLevel = "info", component = "vigil", sink: LogSink = stdoutSink): Logger {
  const min = RANK[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, component, msg, ...fields }));
  };
  return {
    level,
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (c) => createLogger(level, c, sink),
  };
}

/** A logger that drops everything, for tests and CLI commands that print their own output. */
