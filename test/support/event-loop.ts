// Counting the event loop's turns while some work runs: work that holds the loop (a synchronous
// statement, a stream read as fast as it is written) lets few turns happen, whatever its length.

/** Starts counting turns; `stop()` ends the count and returns it. */
export function countEventLoopTurns(): { stop(): number } {
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  return {
    stop: () => {
      counting = false;
      return turns;
    },
  };
}
