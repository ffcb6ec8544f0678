/**
 * Role weights: a role's share of the cluster counts as its dominant share
 * divided by its weight (1.0 unless set). Set by `--weights` at start and by
 * the operator's UPDATE_WEIGHTS, all or nothing; when a changed role has a
 * subscribed framework, every outstanding offer is rescinded so the next
 * allocation follows the new weights, as upstream does.
 */
import { done, fail, type Outcome } from '../model/errors.js';
import type { WeightInfo } from '../model/types.js';
import type { MasterOps } from './ops.js';
import { removeOffer } from './offers.js';
import { roleError } from './validation.js';

export const DEFAULT_WEIGHT = 1;

/** Upstream's reasons, after its common prefix `Failed to validate update weights request JSON`. */
export function weightError(info: WeightInfo): string | undefined {
  const role = info.role.trim();
  const invalid = roleError(role);
  if (invalid !== undefined) return `: Invalid role '${role}': ${invalid}`;
  if (!(info.weight > 0) || !Number.isFinite(info.weight)) {
    return ` for role '${role}': Invalid weight '${info.weight}': Weights must be positive`;
  }
  return undefined;
}

export function updateWeights(
  m: MasterOps,
  infos: readonly WeightInfo[],
  refusal: (role: string) => string | undefined = () => undefined,
): Outcome {
  for (const info of infos) {
    const error = weightError(info);
    if (error !== undefined) return fail('INVALID', `Failed to validate update weights request JSON${error}`);
  }
  const roles = infos.map((info) => info.role.trim());
  const refused = roles.map(refusal).find((r) => r !== undefined);
  if (refused !== undefined) return fail('FORBIDDEN', refused);
  infos.forEach((info, i) => {
    m.weights.set(roles[i]!, info.weight);
    m.ctx.trace.append('weights:update', { role: roles[i], weight: info.weight });
  });
  m.allocator.setWeights(m.weights);
  if (roles.some((role) => m.ledger.roleMembers(role).length > 0)) {
    for (const fw of [...m.frameworks.values()]) {
      for (const offer of [...fw.offers.values()]) removeOffer(m, offer, { rescind: true });
    }
  }
  return done;
}

/** `--weights role1=2.5,role2=1`: the flag's form, parsed; a string is the reason it is invalid. */
export function parseWeights(text: string): WeightInfo[] | string {
  const out: WeightInfo[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    const weight = Number(part.slice(eq + 1));
    if (eq <= 0 || part.slice(eq + 1).trim() === '' || Number.isNaN(weight)) {
      return `Invalid weight '${part}': expected <role>=<weight>`;
    }
    const info = { role: part.slice(0, eq).trim(), weight };
    const error = weightError(info);
    if (error !== undefined) return `Invalid weight '${part}'${error}`;
    out.push(info);
  }
  return out;
}
