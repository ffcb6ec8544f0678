/**
 * `clustersim up --help` opens with what a first start needs, and every
 * flag sits in a group of its own part of the cluster: the basics (port,
 * agents, time, seed, host, logs) come first, not after a hundred lines of
 * cgroups and isolators.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../e2e/cli-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The help as the command prints it. */
async function help(): Promise<string> {
  const { code, stdout } = await runCli(['up', '--help']).output;
  expect(code).toBe(0);
  return stdout;
}

describe('clustersim up --help', () => {
  it('opens with the basics, in the order a first start needs them', async () => {
    const text = await help();
    const flags = [...text.matchAll(/^ {2,}--([a-z-]+)/gm)].map((m) => m[1]);
    expect(text.split('\n').find((l) => l.endsWith(':'))).toBe('Basics:');
    expect(flags.slice(0, 7)).toEqual(['port', 'agents', 'time', 'seed', 'host', 'log-level', 'log-format']);
  });

  it('puts every flag in a named group: only help and version are left in the plain Options', async () => {
    const text = await help();
    const plain = text.split(/^Options:$/m)[1] ?? '';
    const ungrouped = [...plain.split(/^\S.*:$/m)[0]!.matchAll(/^ +(?:-h, )?--([a-z-]+)/gm)].map((m) => m[1]);
    expect(ungrouped).toEqual(['help', 'version']);
    expect(text.match(/^[A-Z][^\n]*:$/gm)).toEqual([
      'Basics:',
      'Masters (docs/masters.md):',
      'Agents (docs/agent-api.md):',
      'Time, allocation and logs (docs/determinism.md):',
      'Authentication and authorization (docs/auth.md):',
      'Containers (docs/agent-api.md, "Containers and cgroups"):',
      'Executors (docs/executor-api.md; docs/agent-api.md, "Container engine"):',
      expect.stringMatching(/^Bundled frameworks/),
      'Limits (docs/cli.md, "Limits"):',
      'Options:',
      'Examples:',
    ]);
  });
});

describe("the commands' examples", () => {
  it.each([
    'run',
    'chaos',
    'replay',
    'check-determinism',
  ])('%s --help names only scenario files that exist', async (command) => {
    const { stdout } = await runCli([command, '--help']).output;
    const named = [...stdout.matchAll(/scenarios\/([a-z0-9-]+\.yaml)/g)].map((m) => m[1]!);
    for (const file of named) expect(existsSync(path.join(ROOT, 'scenarios', file)), file).toBe(true);
  });
});
