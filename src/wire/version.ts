/**
 * The upstream release whose APIs this cluster speaks, as `/version`, MasterInfo
 * and the operator API's GET_VERSION report it. The build is fixed rather than
 * read from the environment, so that renders are replayable.
 */
export const VERSION = '1.11.0';

export const BUILD_INFO = {
  /** 2023-11-14T00:00:00Z, a day before the default cluster epoch. */
  buildTimeSeconds: 1_699_920_000,
  buildDate: '2023-11-14 00:00:00',
  buildUser: 'clustersim',
} as const;
