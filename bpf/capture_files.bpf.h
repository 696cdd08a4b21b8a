/* The capture program's look at files: a descriptor's file and its
 * identity, whether a descriptor can block, sizes kept in kernel state (a
 * BPF map's key and value), reads recorded by reference, and writes to
 * files some process has mapped. Part of capture.bpf.c, which includes it
 * where its maps and helpers are defined. */
#ifndef REWIND_CAPTURE_FILES_BPF_H
#define REWIND_CAPTURE_FILES_BPF_H

/* The current task's open file at descriptor `fd`; NULL if there is none,
 * and *unreadable set if its descriptor table could not be read. */
static __always_inline struct file *file_of_fd(__u64 fd, int *unreadable)
{
	/* Read, not walked: each pointer the verifier sees loaded from the
	 * current task costs it a search of the kernel's types by name
	 * (btf_nested_type_is_trusted), most of a recording's start-up. */
	struct fdtable *fdt = BPF_CORE_READ(bpf_get_current_task_btf(), files, fdt);
	struct file **fds;
	struct file *raw = 0;

	*unreadable = 0;
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&raw, sizeof(raw), fds + fd)) {
		*unreadable = 1;
		return 0;
	}
	return raw ? TYPED(struct file, raw) : 0;
}

/* The kernel keeps a flag in the top bit of the ctime's nanoseconds (the
 * ctime was read since it last changed: the next change takes a
 * fine-grained time, so it differs from every time read before). */
#define I_CTIME_QUERIED_BIT (1u << 31)

static __always_inline __s64 inode_ctime_ns(struct inode *inode)
{
	return inode->i_ctime_sec * 1000000000ll + (inode->i_ctime_nsec & ~I_CTIME_QUERIED_BIT);
}

static __always_inline void fill_file_identity(struct scratch *s, struct inode *inode)
{
	s->sc.file.dev = inode->i_sb->s_dev;
	s->sc.file.ino = inode->i_ino;
	s->sc.file.size = inode->i_size;
	s->sc.file.mtime_ns = inode->i_mtime_sec * 1000000000ll + inode->i_mtime_nsec;
	s->sc.file.ctime_ns = inode_ctime_ns(inode);
}

static __always_inline void capture_file_identity(struct scratch *s, __u64 fd)
{
	int unreadable;
	struct file *file = file_of_fd(fd, &unreadable);

	if (!file)
		return;
	fill_file_identity(s, file->f_inode);
	s->sc.h.flags |= RW_SC_FILE;
}

#define O_NONBLOCK_FLAG	  04000
#define S_IFMT_BITS	  0170000
#define S_IFREG_BITS	  0100000
#define S_IFDIR_BITS	  0040000
#define S_IFBLK_BITS	  0060000
#define S_IFCHR_BITS	  0020000
#define MEM_MAJOR	  1 /* /dev/null, /dev/zero, /dev/urandom… */
#define KERNEL_MINOR_BITS 20

/* Whether I/O on descriptor `fd` of the current task can wait for another
 * thread: anything but a regular file, a directory, a block device, a
 * memory device, or a descriptor in non-blocking mode. */
static __always_inline int fd_may_block(__u64 fd)
{
	int unreadable;
	struct file *file = file_of_fd(fd, &unreadable);
	struct inode *inode;
	__u32 mode;

	if (!file)
		return unreadable; /* else EBADF at once */
	if (file->f_flags & O_NONBLOCK_FLAG)
		return 0;
	inode = file->f_inode;
	mode = inode->i_mode & S_IFMT_BITS;
	if (mode == S_IFREG_BITS || mode == S_IFDIR_BITS || mode == S_IFBLK_BITS)
		return 0;
	if (mode == S_IFCHR_BITS && (inode->i_rdev >> KERNEL_MINOR_BITS) == MEM_MAJOR)
		return 0;
	return 1;
}

/* A BPF map's descriptor is an anonymous inode's file named so
 * (bpf_map_new_fd): "bpf-map" and its NUL, as a little-endian u64. */
#define BPF_MAP_FILE_NAME   0x0070616d2d667062ull
#define ANON_INODE_FS_MAGIC 0x09041934

/* What the kernel copies in or out for a key or a value of the BPF map at
 * descriptor `fd` (bpf_map_value_size in kernel/bpf/syscall.c): a slot for
 * every possible CPU in a per-CPU map, an id in a map of descriptors. */
static __always_inline int bpf_map_sizes(__u32 state, __u64 fd, __u64 *len)
{
	int unreadable;
	struct file *file = file_of_fd(fd, &unreadable);
	struct bpf_map *map;
	__u64 name = 0;
	__u32 value_size;

	if (!file || file->f_inode->i_sb->s_magic != ANON_INODE_FS_MAGIC)
		return -1;
	if (bpf_probe_read_kernel(&name, sizeof(name), file->f_path.dentry->d_name.name) ||
	    name != BPF_MAP_FILE_NAME)
		return -1;
	map = TYPED(struct bpf_map, file->private_data);
	if (state == RW_STATE_BPF_KEY) {
		*len = map->key_size;
		return 0;
	}
	value_size = map->value_size;
	switch ((__u32)map->map_type) {
	case 5:	 /* BPF_MAP_TYPE_PERCPU_HASH */
	case 6:	 /* BPF_MAP_TYPE_PERCPU_ARRAY */
	case 10: /* BPF_MAP_TYPE_LRU_PERCPU_HASH */
	case 21: /* BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE */
		if (!cfg.possible_cpus)
			return -1;
		*len = (((__u64)value_size + 7) & ~7ull) * cfg.possible_cpus;
		return 0;
	case 3:	 /* BPF_MAP_TYPE_PROG_ARRAY */
	case 4:	 /* BPF_MAP_TYPE_PERF_EVENT_ARRAY */
	case 8:	 /* BPF_MAP_TYPE_CGROUP_ARRAY */
	case 12: /* BPF_MAP_TYPE_ARRAY_OF_MAPS */
	case 13: /* BPF_MAP_TYPE_HASH_OF_MAPS */
		*len = 4;
		return 0;
	}
	*len = value_size;
	return 0;
}

static __always_inline int state_size(__u32 state, __u64 key, __u64 *len)
{
	if (state == RW_STATE_BPF_KEY || state == RW_STATE_BPF_VALUE)
		return bpf_map_sizes(state, key, len);
	return -1; /* a semaphore set: its array lives behind the IPC idr */
}

/* Local filesystems whose files change only through writes the kernel sees
 * (so note_open sees every writer, and writes move the ctime): not procfs
 * or sysfs, whose regular files are made up at each read, nor network or
 * FUSE filesystems. */
static __always_inline int stable_filesystem(unsigned long magic)
{
	switch (magic) {
	case 0xEF53:	 /* ext2, ext3, ext4 */
	case 0x58465342: /* xfs */
	case 0x9123683E: /* btrfs */
	case 0x01021994: /* tmpfs */
	case 0xF2F52010: /* f2fs */
	case 0x73717368: /* squashfs */
	case 0xE0F5E1E2: /* erofs */
		return 1;
	}
	return 0;
}

/* A read (RW_SYS_READS_FILE) of `ret` bytes from a file the trace holds:
 * fills the identity and offset and says so. A read of a file that could be
 * held is flagged RW_SC_FILE_CANDIDATE for the recorder to count. The bytes
 * the thread read are the copy's as long as nobody wrote the file between
 * the copy and the read. The recorder shared the copy only if nobody had
 * the file open for writing once it was registered here (note_open counted
 * the writers at the recorder's own open), and any later open for writing
 * deletes the entry at that open's return, before the opener can write.
 * Here, after the read, the file must still have no writer and the
 * identity the copy was made with: a write through a descriptor opened
 * where no syscall returns (io_uring) still changes the ctime. */
static __always_inline int read_by_reference(struct scratch *s, const struct rw_sys_spec *spec,
					     long ret)
{
	struct files_struct *files = BPF_CORE_READ(bpf_get_current_task_btf(), files);
	int unreadable;
	struct file *file = file_of_fd(s->sc.args[0], &unreadable);
	struct inode *inode;
	struct rw_read_copy *copied;
	struct file_key key;
	__s64 offset;
	__u8 offset_arg = spec->offset_arg;

	if (!file)
		return 0;
	inode = file->f_inode;
	if ((inode->i_mode & S_IFMT_BITS) != S_IFREG_BITS)
		return 0;
	if (!stable_filesystem(inode->i_sb->s_magic))
		return 0;
	if (inode->i_writecount.counter > 0)
		return 0;
	fill_file_identity(s, inode);
	key.dev = s->sc.file.dev;
	key.ino = s->sc.file.ino;
	copied = bpf_map_lookup_elem(&read_copies, &key);
	if (!copied || copied->state != RW_COPY_SHARED || copied->id.size != s->sc.file.size ||
	    copied->id.mtime_ns != s->sc.file.mtime_ns || copied->id.ctime_ns != s->sc.file.ctime_ns) {
		s->sc.h.flags |= RW_SC_FILE_CANDIDATE;
		return 0;
	}
	if (offset_arg < RW_MAX_ARGS) {
		offset = (__s64)s->sc.args[offset_arg];
	} else {
		/* Nothing but this thread can move the position during its read:
		 * a descriptor table of its own and the only reference to the
		 * open file (file_ref_t counts from zero: 0 is one reference). */
		if (BPF_CORE_READ(files, count.counter) != 1 ||
		    !bpf_core_field_exists(file->f_ref) || file->f_ref.refcnt.counter != 0)
			return 0;
		offset = file->f_pos - ret;
	}
	if (offset < 0 || offset + ret > s->sc.file.size)
		return 0;
	s->sc.file_offset = offset;
	s->sc.h.flags |= RW_SC_FILE_DATA;
	return 1;
}

/* Where a write (RW_SYS_WRITES_FILE) of `ret` bytes to `file` went: its
 * offset argument (pwritev2 takes -1 for the file position), the file
 * position less what it wrote, or 0 for a resize (RW_OFFSET_NONE). */
static __always_inline __s64 write_offset(struct scratch *s, const struct rw_sys_spec *spec,
					  struct file *file, long ret)
{
	__u8 offset_arg = spec->offset_arg;

	if (offset_arg < RW_MAX_ARGS && (__s64)s->sc.args[offset_arg] != -1)
		return (__s64)s->sc.args[offset_arg];
	if (offset_arg != RW_OFFSET_NONE)
		return file->f_pos - ret;
	return 0;
}

/* A write or resize of args[0]'s file while some process has it mapped
 * (its address space has mappings): the identity, and where the data went,
 * so that replay can change its own copy of the mapped file as the kernel
 * changed the pages every mapping of it shows. */
static __always_inline void note_mapped_write(struct scratch *s, const struct rw_sys_spec *spec,
					      long ret)
{
	int unreadable;
	struct file *file = file_of_fd(s->sc.args[0], &unreadable);
	struct address_space *mapping;
	struct inode *inode;

	if (!file)
		return;
	inode = file->f_inode;
	if ((inode->i_mode & S_IFMT_BITS) != S_IFREG_BITS)
		return;
	mapping = inode->i_mapping;
	if (!mapping || !mapping->i_mmap.rb_root.rb_node)
		return;
	fill_file_identity(s, inode);
	s->sc.file_offset = write_offset(s, spec, file, ret);
	s->sc.h.flags |= RW_SC_MAPPED_WRITE;
}

#define FMODE_WRITE_BIT 0x2
#define FS_MGTIME_FLAG	64 /* the filesystem's timestamps are multigrain */

/* Copies whose references an open for writing ended (the recorder's
 * statistics). */
__u64 copies_retired = 0;

/* The return of a call that opened descriptor `fd` (RW_SYS_OPENS_FILE), in
 * any process of the machine. Opened for writing, a file whose copy reads
 * refer to is withdrawn before the opener can write through it. Opened by
 * the recorder while it registers the file (RW_COPY_PENDING), the file's
 * writers are counted: the recorder shares the copy only if there are none,
 * and from here on every new writer is seen by the first case. */
static __always_inline void note_open(long fd)
{
	int unreadable;
	struct file *file = file_of_fd(fd, &unreadable);
	struct rw_read_copy *copy;
	struct file_key key;
	struct inode *inode;

	if (!file)
		return;
	inode = file->f_inode;
	if (!inode || (inode->i_mode & S_IFMT_BITS) != S_IFREG_BITS)
		return;
	key.dev = inode->i_sb->s_dev;
	key.ino = inode->i_ino;
	copy = bpf_map_lookup_elem(&read_copies, &key);
	if (!copy)
		return;
	if (file->f_mode & FMODE_WRITE_BIT) {
		if (bpf_map_delete_elem(&read_copies, &key) == 0)
			__sync_fetch_and_add(&copies_retired, 1);
		return;
	}
	if ((current_pid_tgid() >> 32) == cfg.recorder_tgid && copy->state == RW_COPY_PENDING) {
		copy->writers = inode->i_writecount.counter;
		copy->fine_ctime = (inode->i_sb->s_type->fs_flags & FS_MGTIME_FLAG) != 0;
		copy->state = RW_COPY_CHECKED;
	}
}

#define PROC_SUPER_MAGIC_VALUE 0x9fa0
#define PROC_MEM_NAME	       0x006d656dull /* "mem" and its NUL, little-endian */

/* The /proc/PID/mem file a write (RW_SYS_WRITES_FILE) went through (its
 * first argument's), or 0. */
static __always_inline struct file *proc_mem_written(struct scratch *s)
{
	int unreadable;
	struct file *file = file_of_fd(s->sc.args[0], &unreadable);
	__u64 name = 0;

	if (!file || file->f_inode->i_sb->s_magic != PROC_SUPER_MAGIC_VALUE || !file->private_data)
		return 0;
	if (bpf_probe_read_kernel(&name, 4, file->f_path.dentry->d_name.name) || name != PROC_MEM_NAME)
		return 0;
	return file;
}

/* That file is the writer's own process's (its mm is the caller's): the
 * write changed the caller's memory. Else it changed another process's,
 * which the supervisor names (RW_STALL_PROCESS_MEMORY). */
static __always_inline int is_own_memory(struct file *file)
{
	return (__u64)file->private_data == (__u64)BPF_CORE_READ(bpf_get_current_task_btf(), mm);
}

static __always_inline int file_is_known(struct scratch *s)
{
	struct file_key key = {.dev = s->sc.file.dev, .ino = s->sc.file.ino};
	struct rw_file_identity *known = bpf_map_lookup_elem(&known_files, &key);

	return known && known->size == s->sc.file.size && known->mtime_ns == s->sc.file.mtime_ns;
}

#endif /* REWIND_CAPTURE_FILES_BPF_H */
