/**
 * A binary min-heap on a plain array, ordered by `before`. Callers order by
 * a total order (a time, then a sequence number), so what comes out first
 * never depends on how the heap breaks ties.
 */
export type Before<T> = (a: T, b: T) => boolean;

export function heapPush<T>(heap: T[], item: T, before: Before<T>): void {
  heap.push(item);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const p = heap[parent]!;
    if (!before(item, p)) break;
    heap[i] = p;
    i = parent;
  }
  heap[i] = item;
}

/** Takes the first item out; undefined when the heap is empty. */
export function heapPop<T>(heap: T[], before: Before<T>): T | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (top === undefined || last === undefined || heap.length === 0) return top;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && before(heap[right]!, heap[left]!) ? right : left;
    if (!before(heap[child]!, last)) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = last;
  return top;
}
