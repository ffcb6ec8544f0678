/**
 * The master's maintenance: the schedule and its machines (kept in the
 * registry, so a new leader has them), and what follows from them, as
 * upstream's master does it (master/http.cpp, master/maintenance.cpp):
 *
 *   update schedule   new machines DRAINING, dropped ones UP (out of the books),
 *                     the others keep their mode and take their window's
 *                     unavailability; every agent whose machine changed has
 *                     its offers and inverse offers rescinded, so what it
 *                     offers next carries the new unavailability
 *   machine/down      DRAINING machines only: DOWN, their agents removed (inverse-offers.ts)
 *   machine/up        DOWN machines only: UP, out of the schedule
 *
 * Nothing here runs, draws or traces while no machine is scheduled.
 */
import { done, fail, type Outcome } from '../model/errors.js';
import {
  machineJson,
  machineKey,
  machineOf,
  machinesError,
  scheduleError,
  type MachineId,
  type MachineInfo,
  type MaintenanceSchedule,
  type Unavailability,
} from '../model/maintenance.js';
import { removeAgent } from './agent-admin.js';
import { unavailabilityChanged } from './inverse-offers.js';
import type { InverseOfferStatus } from './maintenance-state.js';
import type { MasterOps } from './ops.js';

/** The agents the master knows on a machine (a gone one runs nowhere). */
export function agentsOn(m: MasterOps, id: MachineId): string[] {
  const key = machineKey(id);
  const out: string[] = [];
  for (const record of m.agents.values())
    if (record.state !== 'gone' && machineKey(machineOf(record.info)) === key) out.push(record.id);
  return out;
}

/** UPDATE_MAINTENANCE_SCHEDULE and POST `/master/maintenance/schedule`. */
export function updateSchedule(m: MasterOps, schedule: MaintenanceSchedule): Outcome {
  const mt = m.maintenance;
  const error = scheduleError(schedule, mt.machines);
  if (error !== undefined) return fail('INVALID', error);
  const windows = new Map<string, { id: MachineId; unavailability: Unavailability }>();
  for (const w of schedule.windows)
    for (const id of w.machines) windows.set(machineKey(id), { id, unavailability: w.unavailability });
  const existing = new Set(mt.machines.keys());
  const changed: MachineId[] = [];
  for (const [key, info] of [...mt.machines]) {
    const next = windows.get(key);
    if (next === undefined) mt.machines.delete(key);
    else mt.machines.set(key, { ...info, unavailability: next.unavailability });
    changed.push(info.id);
  }
  // A machine new to the schedule starts DRAINING.
  for (const [key, { id, unavailability }] of windows) {
    if (existing.has(key)) continue;
    mt.machines.set(key, { id, mode: 'DRAINING', unavailability });
    changed.push(id);
  }
  mt.schedule = schedule;
  m.ctx.trace.append('maintenance:schedule', { windows: schedule.windows.length, machines: mt.machines.size });
  for (const id of changed) for (const agentId of agentsOn(m, id)) unavailabilityChanged(m, agentId);
  return done;
}

/**
 * START_MAINTENANCE and `/master/machine/down`: DRAINING machines go DOWN.
 * Upstream's master tells each of their agents to shut down and removes it
 * at once: its tasks are TASK_LOST (REASON_AGENT_REMOVED) and its id is not
 * admitted again; an agent started anew on the machine once it is UP
 * registers as a new agent.
 */
export function machinesDown(m: MasterOps, ids: readonly MachineId[]): Outcome {
  const error =
    machinesError(ids) ?? modeError(m, ids, 'DRAINING', 'is not in DRAINING mode and cannot be brought down');
  if (error !== undefined) return fail('INVALID', error);
  for (const id of ids) {
    for (const agentId of agentsOn(m, id)) {
      const record = m.agents.get(agentId)!;
      m.ctx.trace.append('agent:removed', { agentId, reason: MACHINE_DOWN });
      removeAgent(m, record, {
        state: () => 'TASK_LOST',
        message: `Slave ${record.info.hostname} removed: ${MACHINE_DOWN}`,
        reason: 'REASON_AGENT_REMOVED',
        shutdown: MACHINE_DOWN,
      });
    }
  }
  for (const id of ids) {
    const key = machineKey(id);
    m.maintenance.machines.set(key, { ...m.maintenance.machines.get(key)!, mode: 'DOWN' });
  }
  m.ctx.trace.append('maintenance:down', { machines: ids.map(machineJson) });
  return done;
}

const MACHINE_DOWN = "Operator initiated 'Machine DOWN'";

/** STOP_MAINTENANCE and `/master/machine/up`. */
export function machinesUp(m: MasterOps, ids: readonly MachineId[]): Outcome {
  const error = machinesError(ids) ?? modeError(m, ids, 'DOWN', 'is not in DOWN mode and cannot be brought up');
  if (error !== undefined) return fail('INVALID', error);
  const mt = m.maintenance;
  const keys = new Set(ids.map(machineKey));
  for (const key of keys) mt.machines.delete(key);
  // The machines leave the schedule; a window left empty goes, and the schedule with its last window.
  const windows = mt.schedule.windows
    .map((w) => ({ ...w, machines: w.machines.filter((id) => !keys.has(machineKey(id))) }))
    .filter((w) => w.machines.length > 0);
  mt.schedule = { windows };
  m.ctx.trace.append('maintenance:up', { machines: ids.map(machineJson) });
  return done;
}

function modeError(
  m: MasterOps,
  ids: readonly MachineId[],
  mode: MachineInfo['mode'],
  words: string,
): string | undefined {
  for (const id of ids) {
    const info = m.maintenance.machines.get(machineKey(id));
    if (info === undefined) return `Machine '${machineJson(id)}' is not part of a maintenance schedule`;
    if (info.mode !== mode) return `Machine '${machineJson(id)}' ${words}`;
  }
  return undefined;
}

/** A DRAINING machine and the frameworks' answers about its agents. */
export interface DrainingMachine {
  readonly id: MachineId;
  readonly statuses: readonly InverseOfferStatus[];
}

/** Upstream's ClusterStatus: DRAINING machines with the answers, DOWN machines. */
export interface ClusterStatus {
  readonly draining: readonly DrainingMachine[];
  readonly down: readonly MachineId[];
}

export function clusterStatus(m: MasterOps): ClusterStatus {
  const draining: DrainingMachine[] = [];
  const down: MachineId[] = [];
  for (const info of m.maintenance.machines.values()) {
    if (info.mode === 'DOWN') down.push(info.id);
    if (info.mode !== 'DRAINING') continue;
    const statuses = agentsOn(m, info.id).flatMap((agentId) => [
      ...(m.maintenance.statuses.get(agentId)?.values() ?? []),
    ]);
    draining.push({ id: info.id, statuses });
  }
  return { draining, down };
}
