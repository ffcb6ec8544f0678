/**
 * Maintenance as upstream's master keeps it (maintenance.proto): a
 * schedule of windows, each a list of machines and when they will be
 * unavailable, and a mode per scheduled machine. A machine enters the
 * schedule DRAINING, goes DOWN by `machine/down` and UP again (out of the
 * schedule) by `machine/up`. An agent runs on the machine whose hostname
 * and IP are both its own, as upstream's master matches them.
 *
 * Times stay in the wire's nanoseconds so that a schedule reads back as
 * it was written.
 *
 * Validation, in upstream's order and words (master/maintenance.cpp):
 *
 *   a window without machines          List of machines in the maintenance window is empty
 *   a negative duration                Unavailability 'duration' is negative
 *   a machine with no hostname nor IP  Both 'hostname' and 'ip' for a machine are empty
 *   an IP that is not IPv4             Failed to parse IPv4: <ip>
 *   a machine twice                    Machine '<debug>' appears more than once in the schedule
 *   a DOWN machine left out            Machine '<debug>' is deactivated and cannot be removed from the schedule
 *   an empty list (down, up)           List of machines is empty
 */

export interface MachineId {
  readonly hostname?: string;
  readonly ip?: string;
}

export interface Unavailability {
  readonly startNs: number;
  readonly durationNs?: number;
}

export interface MaintenanceWindow {
  readonly machines: readonly MachineId[];
  readonly unavailability: Unavailability;
}

export interface MaintenanceSchedule {
  readonly windows: readonly MaintenanceWindow[];
}

export type MachineMode = 'UP' | 'DRAINING' | 'DOWN';

/** A scheduled machine: its mode and the unavailability of its window. */
export interface MachineInfo {
  readonly id: MachineId;
  readonly mode: MachineMode;
  readonly unavailability?: Unavailability;
}

export const EMPTY_SCHEDULE: MaintenanceSchedule = { windows: [] };

/** One key per machine: upstream compares a MachineID by both fields. */
export function machineKey(id: MachineId): string {
  return `${id.hostname ?? ''}\u0000${id.ip ?? ''}`;
}

/** The machine an agent runs on. */
export function machineOf(agent: { readonly hostname: string; readonly ip: string }): MachineId {
  return { hostname: agent.hostname, ip: agent.ip };
}

/** Protobuf's DebugString of a MachineID, as upstream's messages quote it. */
export function machineDebugString(id: MachineId): string {
  let out = '';
  if (id.hostname !== undefined) out += `hostname: ${JSON.stringify(id.hostname)}\n`;
  if (id.ip !== undefined) out += `ip: ${JSON.stringify(id.ip)}\n`;
  return out;
}

/** The JSON of a MachineID, as upstream's machine/down and machine/up quote it. */
export function machineJson(id: MachineId): string {
  return JSON.stringify({
    ...(id.hostname === undefined ? {} : { hostname: id.hostname }),
    ...(id.ip === undefined ? {} : { ip: id.ip }),
  });
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Upstream's `validation::machine`. */
export function machineError(id: MachineId): string | undefined {
  if (!id.hostname && !id.ip) return "Both 'hostname' and 'ip' for a machine are empty";
  if (id.ip && !IPV4.test(id.ip)) return `Failed to parse IPv4: ${id.ip}`;
  return undefined;
}

/** Upstream's `validation::machines`: the list of `machine/down` and `machine/up`. */
export function machinesError(ids: readonly MachineId[]): string | undefined {
  if (ids.length === 0) return 'List of machines is empty';
  return uniqueMachinesError(ids, new Set());
}

function uniqueMachinesError(ids: readonly MachineId[], seen: Set<string>): string | undefined {
  for (const id of ids) {
    const error = machineError(id);
    if (error !== undefined) return error;
    const key = machineKey(id);
    if (seen.has(key)) return `Machine '${machineDebugString(id)}' appears more than once in the schedule`;
    seen.add(key);
  }
  return undefined;
}

/** Upstream's `validation::schedule`, against the machines the master knows. */
export function scheduleError(
  schedule: MaintenanceSchedule,
  known: ReadonlyMap<string, MachineInfo>,
): string | undefined {
  const updated = new Set<string>();
  for (const window of schedule.windows) {
    if (window.machines.length === 0) return 'List of machines in the maintenance window is empty';
    if ((window.unavailability.durationNs ?? 0) < 0) return "Unavailability 'duration' is negative";
    const error = uniqueMachinesError(window.machines, updated);
    if (error !== undefined) return error;
  }
  for (const [key, info] of known) {
    if (info.mode === 'DOWN' && !updated.has(key))
      return `Machine '${machineDebugString(info.id)}' is deactivated and cannot be removed from the schedule`;
  }
  return undefined;
}
