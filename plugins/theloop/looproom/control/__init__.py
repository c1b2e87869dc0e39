"""Controlling the-loop's instances from Slack: which control plane, which work items a command may
name, what each work item waits on, and the instance and standing commands."""
