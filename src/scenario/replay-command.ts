/** The command that runs a scenario file with a seed again, quoted for a POSIX shell where needed. */
export function replayCommandOf(file: string, seed: string): string {
  return `clustersim run ${quote(file)} --seed ${quote(seed)}`;
}

/** The command that runs one schedule of a fault-schedule search again: the N-th drawn from the seed. */
export function chaosReplayCommandOf(file: string, seed: number, schedule: number): string {
  return `clustersim chaos ${quote(file)} --seed ${seed} --schedule ${schedule}`;
}

function quote(text: string): string {
  return /^[\w./+-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
