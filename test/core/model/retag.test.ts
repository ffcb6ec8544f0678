import { describe, expect, it } from 'vitest';
import { normalise, retag } from '../../../src/core/model/resources.js';
import { resources } from '../helpers.js';

describe('retag', () => {
  const bag = normalise(resources('cpus:2;mem:512;disk:100;ports:[31000-31005]'));

  it('keeps a normal bag of one allocation role normal, in its order, and known as such', () => {
    const tagged = retag(bag, 'r1');
    expect(tagged.map((r) => [r.name, r.allocationRole])).toEqual(bag.map((r) => [r.name, 'r1']));
    // normalise hands back a bag it knows to be normal as it is.
    expect(normalise(tagged)).toBe(tagged);
    const untagged = retag(tagged, undefined);
    expect(normalise(untagged)).toBe(untagged);
    expect(untagged).toEqual(bag);
  });

  it('leaves a bag of mixed allocation roles to be normalised (two entries may become one)', () => {
    const mixed = normalise([...retag(resources('cpus:1'), 'a'), ...retag(resources('cpus:2'), 'b')]);
    const tagged = retag(mixed, 'c');
    expect(tagged).toHaveLength(2);
    expect(normalise(tagged)).not.toBe(tagged);
    expect(normalise(tagged)).toHaveLength(1);
  });
});
