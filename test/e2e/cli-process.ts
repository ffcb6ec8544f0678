import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface UpProcess {
  readonly child: ChildProcess;
  readonly masterUrl: string;
  readonly stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `clustersim up` from the sources and waits for its ready line. */
export function runCli(
  args: readonly string[],
  /** Variables added to this process's environment. */
  env: Readonly<Record<string, string>> = {},
): { child: ChildProcess; output: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const output = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, output };
}

export async function startUp(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<UpProcess> {
  const { child, output } = runCli(['up', '--port', '0', ...args], env);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const masterUrl = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      const m = /master at (http:\/\/[^\s]+)/.exec(stdout);
      if (m !== null) resolve(m[1]!);
    });
    void output.then(({ code }) => reject(new Error(`clustersim up exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    masterUrl,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      return (await output).code;
    },
  };
}
