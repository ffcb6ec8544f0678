/**
 * The master faults of the vocabulary (faults/vocabulary.ts), applied to the group of
 * masters (master/group.ts):
 *
 *   crash_master     the master process dies: the leader unless `master` names one
 *   restart_master   a master that is down starts again, as a standby
 *   master_failover  the leader (or `master`) dies and its supervisor starts
 *                    it again at once: it contends behind the others
 */
import { fail, ok, type Outcome } from '../model/errors.js';
import type { Fault, FaultResult } from './vocabulary.js';

/** Upstream's answer while no master leads. */
export const NO_LEADER = 'No leader elected';

export type MasterFault = Extract<Fault, { readonly type: 'crash_master' | 'restart_master' | 'master_failover' }>;

export function isMasterFault(fault: Fault): fault is MasterFault {
  return fault.type === 'crash_master' || fault.type === 'restart_master' || fault.type === 'master_failover';
}

/** What the cluster offers the master faults. */
export interface MasterFaultTarget {
  crashMaster(index?: number): void;
  restartMaster(index: number): void;
}

export interface MasterSeats {
  has(index: number): boolean;
  leaderIndex(): number | undefined;
}

export function injectMasterFault(
  cluster: MasterFaultTarget,
  seats: MasterSeats,
  fault: MasterFault,
): Outcome<FaultResult> {
  if (fault.master !== undefined && !seats.has(fault.master))
    return fail('NOT_FOUND', `Master ${fault.master} not found`);
  const index = fault.master ?? seats.leaderIndex();
  if (index === undefined) return fail('UNAVAILABLE', NO_LEADER);
  switch (fault.type) {
    case 'crash_master':
      cluster.crashMaster(index);
      break;
    case 'restart_master':
      cluster.restartMaster(index);
      break;
    case 'master_failover':
      cluster.crashMaster(index);
      cluster.restartMaster(index);
      break;
  }
  return ok({ master: index });
}
