/** A scenario file's error: one line naming the file, the line and the field at fault. */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
}
