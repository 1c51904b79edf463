/** What an agent host shows the model about Cairn: the session routine, in a few lines. */
export const SERVER_INSTRUCTIONS = `Cairn is the shared memory and coordination server of your team of agents. Use it as a routine:
1. At the start of a session call session_start: it returns your last handoff, what changed in memory since, unread messages, the tasks you hold and the standing directives. Follow the directives.
2. Before you work on something, memory_search for what the team already knows about it (hits are a headline and a snippet: memory_get an id for the whole entry); before deep work on an entry, memory_related shows what hangs off it (supporting, derived and contradicting entries).
3. When you learn something others would need (a fact, a fix), memory_write it. A write that repeats known knowledge reinforces it instead of copying it.
4. When you make a choice others should know about (an approach, a library, a trade-off), decision_record it with its rationale and the options you rejected; check decision_list before reopening a question the team already settled.
5. Take work with task_claim before you start it (only one agent wins a claim), and task_complete or task_fail it when done. Check message_inbox and answer with message_send.
6. To wait for a message, a task or a change, call wait_for instead of polling.
7. Before you stop, call session_handoff with a summary, what is in progress and the next steps, so the next session starts where you left off.`;
