import { describe, expect, it } from 'vitest';
import { canTransition, isTerminal, transition } from '../../../src/core/model/task-state.js';
import { TASK_STATES, type TaskState } from '../../../src/core/model/types.js';

const TERMINAL: readonly TaskState[] = [
  'TASK_FINISHED',
  'TASK_FAILED',
  'TASK_KILLED',
  'TASK_ERROR',
  'TASK_LOST',
  'TASK_DROPPED',
  'TASK_GONE',
  'TASK_GONE_BY_OPERATOR',
  'TASK_UNKNOWN',
];

describe('task state machine', () => {
  it('knows the terminal states', () => {
    for (const state of TASK_STATES) expect(isTerminal(state), state).toBe(TERMINAL.includes(state));
  });

  it('allows the lifecycle of a task that runs and ends', () => {
    const path: TaskState[] = [
      'TASK_STAGING',
      'TASK_STARTING',
      'TASK_RUNNING',
      'TASK_RUNNING',
      'TASK_KILLING',
      'TASK_KILLED',
    ];
    for (let i = 1; i < path.length; i++)
      expect(canTransition(path[i - 1]!, path[i]!), `${path[i - 1]} -> ${path[i]}`).toBe(true);
  });

  it.each([
    ['TASK_STAGING', 'TASK_RUNNING'],
    ['TASK_STAGING', 'TASK_KILLING'],
    ['TASK_STAGING', 'TASK_ERROR'],
    ['TASK_STAGING', 'TASK_UNREACHABLE'],
    ['TASK_STARTING', 'TASK_FAILED'],
    ['TASK_RUNNING', 'TASK_FINISHED'],
    ['TASK_RUNNING', 'TASK_UNREACHABLE'],
    ['TASK_KILLING', 'TASK_KILLING'],
    ['TASK_KILLING', 'TASK_FAILED'],
    ['TASK_UNREACHABLE', 'TASK_RUNNING'],
    ['TASK_UNREACHABLE', 'TASK_GONE'],
  ] as const)('allows %s -> %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
    expect(transition('t', from, to)).toBe(to);
  });

  it.each([
    ['TASK_RUNNING', 'TASK_STAGING'],
    ['TASK_RUNNING', 'TASK_STARTING'],
    ['TASK_STARTING', 'TASK_STAGING'],
    ['TASK_STARTING', 'TASK_STARTING'],
    ['TASK_STAGING', 'TASK_STAGING'],
    ['TASK_KILLING', 'TASK_RUNNING'],
    ['TASK_KILLING', 'TASK_STARTING'],
    ['TASK_UNREACHABLE', 'TASK_STAGING'],
  ] as const)('forbids %s -> %s', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
    expect(() => transition('t-1', from, to)).toThrow(`task 't-1': illegal transition ${from} -> ${to}`);
  });

  it('never leaves a terminal state', () => {
    for (const from of TERMINAL) {
      for (const to of TASK_STATES) expect(canTransition(from, to), `${from} -> ${to}`).toBe(false);
    }
  });

  it('reaches any terminal state from any live state', () => {
    for (const from of TASK_STATES.filter((s) => !isTerminal(s))) {
      for (const to of TERMINAL) expect(canTransition(from, to), `${from} -> ${to}`).toBe(true);
    }
  });
});
