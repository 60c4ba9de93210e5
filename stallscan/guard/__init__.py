"""The live guard: a Stop / SubagentStop hook for Claude Code and Codex built on the replay's stall rules.

stallscan.guard.hook (the hook), .judge (the decision), .transcript (the transcript tail), .log (the guard
log), .install (hook entries in the harnesses' settings files). Nothing is imported here, so
`python -m stallscan.guard` loads only what the hook needs.
"""
