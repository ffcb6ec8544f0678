/**
 * Maintenance on the wire (maintenance.proto): schedules and machine ids
 * in, from operator calls and the `/maintenance/*` and `/machine/*`
 * bodies; the schedule and the cluster status out, with what the reader
 * may see of them (the get_maintenance_* ACLs: all or none, as upstream's
 * local authorizer names no machine).
 */
import type { MachineId, MaintenanceSchedule, Unavailability } from '../core/model/maintenance.js';
import type { ClusterView } from '../core/view.js';
import type { mesos } from './generated/types.js';
import { decodeJson } from './json.js';
import { unavailabilityToWire } from './scheduler-out.js';
import type { Viewer } from './view-filter.js';

type WireSchedule = mesos.v1.maintenance.Schedule;

export function machineIdFromWire(id: mesos.v1.MachineID): MachineId {
  return {
    ...(id.hostname === undefined ? {} : { hostname: id.hostname }),
    ...(id.ip === undefined ? {} : { ip: id.ip }),
  };
}

function unavailabilityFromWire(u: mesos.v1.Unavailability): Unavailability {
  return {
    startNs: u.start.nanoseconds,
    ...(u.duration === undefined ? {} : { durationNs: u.duration.nanoseconds }),
  };
}

export function scheduleFromWire(schedule: WireSchedule): MaintenanceSchedule {
  return {
    windows: (schedule.windows ?? []).map((w) => ({
      machines: (w.machine_ids ?? []).map(machineIdFromWire),
      unavailability: unavailabilityFromWire(w.unavailability),
    })),
  };
}

export function machineIdToWire(id: MachineId): mesos.v1.MachineID {
  return { ...id };
}

/** The schedule as the reader may see it: empty to one the get_maintenance_schedules ACL refuses. */
export function scheduleToWire(view: ClusterView, viewer: Viewer): WireSchedule {
  if (!viewer.maintenance('get_maintenance_schedules')) return {};
  const windows = view.maintenanceSchedule().windows;
  if (windows.length === 0) return {};
  return {
    windows: windows.map((w) => ({
      machine_ids: w.machines.map(machineIdToWire),
      unavailability: unavailabilityToWire(w.unavailability),
    })),
  };
}

/** DRAINING machines with the frameworks' answers, DOWN machines; empty to a reader the ACL refuses. */
export function clusterStatusToWire(view: ClusterView, viewer: Viewer): mesos.v1.maintenance.ClusterStatus {
  if (!viewer.maintenance('get_maintenance_statuses')) return {};
  const { draining, down } = view.maintenanceStatus();
  return {
    ...(draining.length === 0
      ? {}
      : {
          draining_machines: draining.map((d) => ({
            id: machineIdToWire(d.id),
            ...(d.statuses.length === 0
              ? {}
              : {
                  statuses: d.statuses.map((s) => ({
                    status: s.status,
                    framework_id: { value: s.frameworkId },
                    timestamp: { nanoseconds: Math.round(s.timestampMs * 1e6) },
                  })),
                }),
          })),
        }),
    ...(down.length === 0 ? {} : { down_machines: down.map(machineIdToWire) }),
  };
}

/** POST `/maintenance/schedule`: the body as a Schedule, or upstream's reason it is not one. */
export function scheduleFromJson(text: string): MaintenanceSchedule | string {
  const decoded = decodeJson<WireSchedule>('mesos.v1.maintenance.Schedule', text, 'Schedule');
  return decoded.ok ? scheduleFromWire(decoded.value) : decoded.error;
}

/** POST `/machine/down` and `/machine/up`: the body as a JSON array of MachineIDs. */
export function machineIdsFromJson(text: string): MachineId[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return `Failed to parse body into JSON: ${(err as Error).message}`;
  }
  if (!Array.isArray(parsed)) return 'Expecting a JSON array of machines';
  const ids: MachineId[] = [];
  for (const element of parsed) {
    const decoded = decodeJson<mesos.v1.MachineID>('mesos.v1.MachineID', JSON.stringify(element), 'MachineID');
    if (!decoded.ok) return decoded.error;
    ids.push(machineIdFromWire(decoded.value));
  }
  return ids;
}
