/**
 * A CPU profile of a stretch of a bench (the reads, not the build), through
 * the inspector of the process itself.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/** Starts profiling; the function returned stops and writes `dir/name.cpuprofile`. Nothing without a `dir`. */
export async function startProfile(dir: string | undefined, name = 'CPU.reads'): Promise<() => Promise<void>> {
  if (dir === undefined) return async () => {};
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/${name}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  };
}
