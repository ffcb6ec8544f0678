/** The upstream release whose APIs this cluster speaks, as `/version` and MasterInfo report it. */
export const VERSION = '1.11.0';
