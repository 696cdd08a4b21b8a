/* SPDX-License-Identifier: GPL-2.0 */
/* Thread and process ids as the recorder sees them.
 *
 * The kernel's helpers give ids in the initial pid namespace. A recorder
 * inside a container sees its tracees by the ids of its own namespace (in
 * ptrace, wait, /proc, kill's arguments and the supervisor's maps): there,
 * every id comes from the task's struct pid at the namespace's level. */
#pragma once

/* The level of the recorder's namespace, found once from the first
 * recorded task (every recorded task is in it or in one below it). */
__s32 pid_ns_level = -1;

#define RW_MAX_PID_NS_DEPTH 8

static __always_inline struct upid upid_at(struct pid *pid, __u32 level)
{
	struct upid up = {};
	unsigned long at = (unsigned long)pid + bpf_core_field_offset(struct pid, numbers) +
			   (unsigned long)level * sizeof(struct upid);

	bpf_probe_read_kernel(&up, sizeof(up), (void *)at);
	return up;
}

static __always_inline __u32 id_in_recorder_ns(struct pid *pid)
{
	__s32 level = pid_ns_level;
	__u32 top;

	if (!pid)
		return 0;
	top = BPF_CORE_READ(pid, level);
	if (level < 0) {
		for (__u32 i = 0; i < RW_MAX_PID_NS_DEPTH; i++) {
			struct upid up;

			if (i > top)
				break;
			up = upid_at(pid, i);
			if (up.ns && BPF_CORE_READ(up.ns, ns.inum) == cfg.pid_ns_ino) {
				pid_ns_level = (__s32)i;
				return (__u32)up.nr;
			}
		}
		return 0;
	}
	if (top < (__u32)level)
		return 0;
	return (__u32)upid_at(pid, (__u32)level).nr;
}

static __always_inline __u32 task_tid(struct task_struct *t)
{
	if (!cfg.pid_ns_ino)
		return BPF_CORE_READ(t, pid);
	return id_in_recorder_ns(BPF_CORE_READ(t, thread_pid));
}

static __always_inline __u32 task_tgid(struct task_struct *t)
{
	if (!cfg.pid_ns_ino)
		return BPF_CORE_READ(t, tgid);
	return id_in_recorder_ns(BPF_CORE_READ(t, group_leader, thread_pid));
}

/* bpf_get_current_pid_tgid(), in the recorder's namespace. */
static __always_inline __u64 current_pid_tgid(void)
{
	struct task_struct *t;

	if (!cfg.pid_ns_ino)
		return bpf_get_current_pid_tgid();
	t = bpf_get_current_task_btf();
	return ((__u64)task_tgid(t) << 32) | task_tid(t);
}
