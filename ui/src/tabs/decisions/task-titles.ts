// The titles of the tasks decisions name, read once each, so that a decision's task reads as its
// title rather than as an id.

import { useEffect, useRef, useState } from "preact/hooks";
import { api, encode } from "../../api.js";
import type { Task } from "../../../../src/wire/tasks.js";

/** Titles of `ids` as they arrive; an id whose task cannot be read stays out (shown by its id). */
export function useTaskTitles(ids: readonly (string | null)[]): ReadonlyMap<string, string> {
  const [titles, setTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const asked = useRef(new Set<string>());
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const key = [...new Set(ids.filter((id): id is string => id !== null))].sort().join(",");
  useEffect(() => {
    for (const id of key ? key.split(",") : []) {
      if (asked.current.has(id)) continue;
      asked.current.add(id);
      api.get<Task>(`/tasks/${encode(id)}`).then(
        (response) => {
          if (mounted.current) setTitles((current) => new Map(current).set(id, response.data.title));
        },
        () => {
          // Then it is shown by its id; it is asked again only when the view opens anew.
        },
      );
    }
  }, [key]);
  return titles;
}
