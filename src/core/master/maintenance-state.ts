/**
 * What the master keeps of maintenance: the schedule and its machines
 * (in the registry too), the outstanding inverse offers, the frameworks'
 * answers to them and the refusal filters of those answers. It changes in
 * `maintenance.ts` (the schedule, machines down and up) and
 * `inverse-offers.ts` (inverse offers and their answers).
 */
import {
  EMPTY_SCHEDULE,
  machineKey,
  machineOf,
  type MachineInfo,
  type MaintenanceSchedule,
  type Unavailability,
} from '../model/maintenance.js';

/** An inverse offer the master made and the framework has not answered. */
export interface InverseOfferRecord {
  readonly id: string;
  readonly frameworkId: string;
  readonly agentId: string;
  readonly unavailability: Unavailability;
}

export type InverseOfferAnswer = 'UNKNOWN' | 'ACCEPT' | 'DECLINE';

/** A framework's last answer to the inverse offers of an agent (upstream's InverseOfferStatus). */
export interface InverseOfferStatus {
  readonly frameworkId: string;
  readonly status: InverseOfferAnswer;
  readonly timestampMs: number;
}

export class Maintenance {
  schedule: MaintenanceSchedule = EMPTY_SCHEDULE;
  /** The scheduled machines, by `machineKey`; an UP machine is not kept. */
  readonly machines = new Map<string, MachineInfo>();
  /** Outstanding inverse offers, by id. */
  readonly inverseOffers = new Map<string, InverseOfferRecord>();
  /** Answers per agent, then per framework; cleared when the agent's unavailability changes. */
  readonly statuses = new Map<string, Map<string, InverseOfferStatus>>();
  /** Until when a framework refused the inverse offers of an agent, by `agentId\0frameworkId`. */
  readonly filters = new Map<string, number>();

  get active(): boolean {
    return this.machines.size > 0;
  }

  /** The scheduled machine an agent runs on, if any. */
  machineOfAgent(agent: { readonly hostname: string; readonly ip: string }): MachineInfo | undefined {
    if (this.machines.size === 0) return undefined;
    return this.machines.get(machineKey(machineOf(agent)));
  }

  /** Restores what the registry kept. */
  restore(schedule: MaintenanceSchedule, machines: readonly MachineInfo[]): void {
    this.schedule = schedule;
    for (const info of machines) this.machines.set(machineKey(info.id), info);
  }
}
