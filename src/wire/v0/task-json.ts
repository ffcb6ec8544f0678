/**
 * The task object of `/state`, `/frameworks` and `/tasks` written straight
 * to JSON text, for the reads that write hundreds of thousands of them:
 * the same text as `toV0Json(taskObject(task, user))`, without the
 * object in between. The rare parts (limits, labels, ranges or sets among
 * the resources) go through the object renderers.
 */
import { fromMilli, type Resources } from '../../core/model/resources.js';
import type { Task } from '../../core/model/records.js';
import type { TaskStatus } from '../../core/model/types.js';
import { jsonString, LastQuoted } from '../../core/kernel/trace.js';
import { BagMemo } from '../bag-memo.js';
import { formatDouble } from '../json-encode.js';
import { toV0Json } from './json.js';
import { taskObject } from './objects.js';
import { labelsJson, resourcesSummary } from './summary.js';

const frameworkIds = new LastQuoted();
const agentIds = new LastQuoted();
const roles = new LastQuoted();
const users = new LastQuoted();

/** The summary of each kind of bag seen (bag-memo.ts); null for a bag `summaryJson` leaves to the objects. */
const bagSummaries = new BagMemo((bag) => summaryJson(bag) ?? null);

export function taskJson(task: Task, user: string): string {
  const { spec } = task;
  const limits = spec.limits !== undefined && Object.keys(spec.limits).length > 0;
  const resources = bagSummaries.of(task.resources);
  if (limits || resources === null) return toV0Json(taskObject(task, user));
  let out = `{"id":${jsonString(spec.taskId)},"name":${jsonString(spec.name)},"framework_id":${frameworkIds.of(task.frameworkId)},"executor_id":${jsonString(task.executorId ?? '')}`;
  out += `,"slave_id":${agentIds.of(task.agentId)},"state":"${task.state}","resources":${resources},"role":${roles.of(task.role)},"statuses":[`;
  const { statuses } = task;
  for (let i = 0; i < statuses.length; i++) out += (i === 0 ? '' : ',') + statusJson(statuses[i]!);
  out += `],"user":${users.of(user)}`;
  if (spec.labels.length > 0) out += `,"labels":${toV0Json(labelsJson(spec.labels))}`;
  return `${out}}`;
}

function statusJson(status: TaskStatus): string {
  const head = `{"state":"${status.state}","timestamp":${formatDouble(status.timestampMs / 1000)}`;
  return status.containerId === undefined
    ? `${head}}`
    : `${head},"container_status":{"container_id":{"value":${jsonString(status.containerId)}}}}`;
}

/**
 * The resources summary of a bag of scalars among cpus, gpus, mem and disk
 * (a task's usual bag); undefined for anything else, which goes through
 * `resourcesSummary`.
 */
function summaryJson(bag: Resources): string | undefined {
  let cpus = 0;
  let gpus = 0;
  let mem = 0;
  let disk = 0;
  for (let i = 0; i < bag.length; i++) {
    const r = bag[i]!;
    if (r.type !== 'SCALAR') return undefined;
    const milli = r.milli ?? 0;
    switch (r.name) {
      case 'cpus':
        cpus += milli;
        break;
      case 'gpus':
        gpus += milli;
        break;
      case 'mem':
        mem += milli;
        break;
      case 'disk':
        disk += milli;
        break;
      default:
        return undefined;
    }
  }
  return `{"cpus":${double(cpus)},"gpus":${double(gpus)},"mem":${double(mem)},"disk":${double(disk)}}`;
}

const double = (milli: number): string => formatDouble(fromMilli(milli));

/** The summary text of any bag, for callers that need it whatever it holds. */
export function resourcesSummaryJson(bag: Resources): string {
  return summaryJson(bag) ?? toV0Json(resourcesSummary(bag));
}
