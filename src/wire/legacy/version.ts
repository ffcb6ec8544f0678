/**
 * `/version` and the build fields of `/state`. The build is fixed rather
 * than read from the environment, so that renders are replayable.
 */
import { Double } from './legacy-json.js';
import type { JsonObject } from './summary.js';

export const BUILD_INFO = {
  /** 2023-11-14T00:00:00Z, a day before the default cluster epoch. */
  buildTimeSeconds: 1_699_920_000,
  buildDate: '2023-11-14 00:00:00',
  buildUser: 'clustersim',
} as const;

/** `build_time` is a double of seconds since the epoch. */
export function renderVersion(version: string): JsonObject {
  return {
    version,
    build_date: BUILD_INFO.buildDate,
    build_time: new Double(BUILD_INFO.buildTimeSeconds),
    build_user: BUILD_INFO.buildUser,
  };
}
