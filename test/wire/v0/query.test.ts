import { describe, expect, it } from 'vitest';
import {
  decodeQuery,
  frameworksQuery,
  jsonpQuery,
  slavesQuery,
  tasksQuery,
  type QueryParams,
  type QueryResult,
} from '../../../src/wire/v0/index.js';

const params = (target: string): QueryParams => {
  const decoded = decodeQuery(target);
  if (!decoded.ok) throw new Error(decoded.error);
  return decoded.value;
};
const entries = (target: string) => Object.fromEntries(params(target));
const errorOf = <T>(result: QueryResult<T>): string => {
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.value)}`);
  return result.error;
};

describe('decodeQuery, as upstream decodes a query string', () => {
  it('keeps the last value of a repeated name', () => {
    expect(entries('/tasks?limit=1&limit=2&limit=3')).toEqual({ limit: '3' });
    expect(entries('/x?foo=1&bar=%20&baz&foo=3')).toEqual({ foo: '3', bar: ' ', baz: '' });
  });

  it('separates by & and ;, skips empty tokens, splits at the first =', () => {
    expect(entries('/x?a=1;b=2&&c=x=y;')).toEqual({ a: '1', b: '2', c: 'x=y' });
    expect(entries('/x')).toEqual({});
    expect(entries('/x?')).toEqual({});
    expect(entries('http://host:5050/x?a=1')).toEqual({ a: '1' });
  });

  it('reads + as a space and %XX as UTF-8 bytes, in names too', () => {
    expect(entries('/x?task%5Fid=a+b%2Bc')).toEqual({ task_id: 'a b+c' });
    expect(entries('/x?id=%C3%A9t%C3%A9')).toEqual({ id: 'été' });
    // Node's request line is latin1: the raw bytes of 'é' arrive as two characters.
    expect(entries('/x?id=\u00c3\u00a9')).toEqual({ id: 'é' });
    expect(entries('/x?id=caf\u00e9%21')).toEqual({ id: 'caf\ufffd!' });
    expect(entries('/x?id=\u{1F600}%21')).toEqual({ id: '\u{1F600}!' });
  });

  it('fails on a malformed % escape, in upstream words', () => {
    expect(errorOf(decodeQuery('/x?a=%zz'))).toBe("Malformed % escape in '%zz': '%zz'");
    expect(errorOf(decodeQuery('/x?ok=1&b%2=1'))).toBe("Malformed % escape in 'b%2': '%2'");
    expect(errorOf(decodeQuery('/x?%'))).toBe("Malformed % escape in '%': '%'");
  });
});

describe('the queries of the endpoints', () => {
  it('/tasks: limit and offset are non-negative integers, order asc or des; anything else is the default, as upstream', () => {
    expect(tasksQuery(params('/tasks?limit=5&offset=+2&order=asc&framework_id=f&task_id=t&jsonp=cb&other=1'))).toEqual({
      ok: true,
      value: { limit: 5, offset: 2, order: 'asc', framework_id: 'f', task_id: 't', jsonp: 'cb' },
    });
    expect(tasksQuery(params('/tasks'))).toEqual({ ok: true, value: {} });
    for (const bad of ['abc', '-1', '1.5', '1e3', '', '0x10', '99999999999999999999']) {
      expect(tasksQuery(params(`/tasks?offset=${bad}&limit=${bad}`)), bad).toEqual({ ok: true, value: {} });
    }
    expect(tasksQuery(params('/tasks?order=desc'))).toEqual({ ok: true, value: {} });
  });

  it('a jsonp that is no (dotted) function name is not used, on every JSON endpoint', () => {
    expect(jsonpQuery(params('/state?jsonp=window.cb_1.$x'))).toEqual({ ok: true, value: { jsonp: 'window.cb_1.$x' } });
    for (const bad of ['', '1cb', 'alert(1)', 'a..b', 'a.', 'a b']) {
      const target = `/state?jsonp=${encodeURIComponent(bad)}`;
      for (const parse of [jsonpQuery, tasksQuery, frameworksQuery, slavesQuery]) {
        expect(parse(params(target)), target).toEqual({ ok: true, value: {} });
      }
    }
  });

  it('/frameworks and /slaves take their id filter as given', () => {
    expect(frameworksQuery(params('/frameworks?framework_id=a%2Fb&slave_id=x'))).toEqual({
      ok: true,
      value: { framework_id: 'a/b' },
    });
    expect(slavesQuery(params('/slaves?slave_id=&framework_id=x'))).toEqual({ ok: true, value: { slave_id: '' } });
  });
});
