/**
 * The masters' side of the `Cluster` port's inputs (cluster.ts): each goes
 * to the leading master of the group (master/group.ts), and while none is
 * elected it is refused as upstream's masters refuse it then: a stream
 * closed at once, a call UNAVAILABLE. The port records them.
 */
import { NO_LEADER } from './faults/master.js';
import type { MasterGroup } from './master/group.js';
import type { Subscribed } from './master/master.js';
import { fail, type Outcome } from './model/errors.js';
import type { OperatorCall, OperatorValue } from './model/operator-types.js';
import type { SchedulerCall, Subscription } from './model/types.js';
import type { Outbox } from './network/outbox.js';
import type { Trace } from './kernel/trace.js';

/** A scheduler call other than SUBSCRIBE, or one of a type the API does not know. */
export type AnySchedulerCall = SchedulerCall | { readonly type: 'UNKNOWN' };

export class MasterInputs {
  constructor(
    private readonly masters: MasterGroup,
    private readonly outbox: Outbox,
    private readonly trace: Trace,
  ) {}

  subscribe(connectionId: string, sub: Subscription, principal?: string): Subscribed {
    const leader = this.masters.leader;
    if (leader !== undefined) return leader.subscribe(connectionId, sub, principal);
    this.outbox.close(connectionId, NO_LEADER);
    return { frameworkId: sub.info.id ?? '', streamId: '' };
  }

  /** An ACKNOWLEDGE refused for its uuid: traced, and counted by the misuse log (of the master that led last). */
  acknowledgeRefused(frameworkId: string, taskId?: string, agentId?: string): void {
    this.trace.append('call:acknowledge-refused', { frameworkId, taskId, agentId });
    const master = this.masters.current;
    if (master.frameworks.has(frameworkId)) master.misuse.acknowledgeRefused(frameworkId, taskId, agentId);
  }

  call(frameworkId: string, streamId: string | undefined, call: AnySchedulerCall, principal?: string): Outcome {
    return this.masters.leader?.call(frameworkId, streamId, call, principal) ?? fail('UNAVAILABLE', NO_LEADER);
  }

  operator(call: OperatorCall, principal?: string): Outcome<OperatorValue | undefined> {
    return this.masters.leader?.operator(call, principal) ?? fail('UNAVAILABLE', NO_LEADER);
  }

  subscribeOperator(connectionId: string): void {
    if (this.masters.leader === undefined) this.outbox.close(connectionId, NO_LEADER);
    else this.masters.leader.subscribeOperator(connectionId);
  }

  /** A master process dies: the one of `index`, or the leader when none is given (none leading: nothing). */
  crash(index?: number): void {
    const target = index ?? this.masters.leaderIndex();
    if (target !== undefined) this.masters.crash(target);
  }
}
