/** The command that runs a scenario file with a seed again, quoted for a POSIX shell where needed. */
export function replayCommandOf(file: string, seed: string): string {
  return `clustersim run ${quote(file)} --seed ${quote(seed)}`;
}

function quote(text: string): string {
  return /^[\w./+-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
