/**
 * An agent's entry of `/state` written straight to JSON text, for the
 * reads that write tens of thousands of them: the same text as
 * `toV0Json(slaveObjectOf(record, books, version, viewer))`. What
 * follows from an agent's total alone (its summary, reservations and
 * unreserved part) and its attributes is written once per bag (agents
 * started alike share them); its books' summaries are written each time.
 */
import type { Books } from '../../core/master/ledger.js';
import type { Resources } from '../../core/model/resources.js';
import type { Attribute } from '../../core/model/types.js';
import type { AgentView } from '../../core/view.js';
import { SHOW_ALL, type Viewer } from '../view-filter.js';
import { toV0Json } from './json.js';
import { AGENT_CAPABILITIES, reservations, unreserved } from './slaves.js';
import { attributesObject, resourcesSummary, secondsOf } from './summary.js';
import { jsonString } from '../../core/kernel/trace.js';
import { resourcesSummaryJson } from './task-json.js';

interface TotalText {
  readonly resources: string;
  /** Each reservation role with the summary of what is reserved to it, roles sorted. */
  readonly reserved: readonly (readonly [string, string])[];
  readonly unreserved: string;
}

const totals = new WeakMap<Resources, TotalText>();
const attributeTexts = new WeakMap<readonly Attribute[], string>();
const CAPABILITIES = toV0Json([...AGENT_CAPABILITIES]);

function totalText(total: Resources): TotalText {
  let text = totals.get(total);
  if (text === undefined) {
    const reserved = [...reservations(total)].map(
      ([role, bag]) => [role, `${jsonString(role)}:${toV0Json(resourcesSummary(bag))}`] as const,
    );
    text = { resources: resourcesSummaryJson(total), reserved, unreserved: resourcesSummaryJson(unreserved(total)) };
    totals.set(total, text);
  }
  return text;
}

function attributesText(attributes: readonly Attribute[]): string {
  let text = attributeTexts.get(attributes);
  if (text === undefined) {
    text = toV0Json(attributesObject(attributes));
    attributeTexts.set(attributes, text);
  }
  return text;
}

export function slaveJson(record: AgentView, books: Books, version: string, viewer: Viewer = SHOW_ALL): string {
  const { info } = record;
  const total = totalText(info.resources);
  let reserved = '';
  for (const [role, text] of total.reserved) if (viewer.role(role)) reserved += (reserved === '' ? '' : ',') + text;
  let out = `{"id":${jsonString(record.id)},"hostname":${jsonString(info.hostname)},"port":${JSON.stringify(info.port)}`;
  out += `,"attributes":${attributesText(info.attributes)},"pid":${jsonString(record.pid)},"registered_time":${toV0Json(secondsOf(record.registeredTimeMs))}`;
  out += `,"resources":${total.resources},"used_resources":${resourcesSummaryJson(books.used)},"offered_resources":${resourcesSummaryJson(books.offered)}`;
  out += `,"reserved_resources":{${reserved}},"unreserved_resources":${total.unreserved},"active":${record.active ? 'true' : 'false'}`;
  return `${out},"deactivated":false,"version":${jsonString(version)},"capabilities":${CAPABILITIES}}`;
}
