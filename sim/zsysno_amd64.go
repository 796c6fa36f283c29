// Code generated from golang.org/x/sys/unix zsysnum_linux_amd64.go (v0.50.0); DO NOT EDIT.

package sim

// Linux x86-64 system call numbers, as arch/x86/entry/syscalls/syscall_64.tbl.
const (
	SYS_READ                    Sysno = 0
	SYS_WRITE                   Sysno = 1
	SYS_OPEN                    Sysno = 2
	SYS_CLOSE                   Sysno = 3
	SYS_STAT                    Sysno = 4
	SYS_FSTAT                   Sysno = 5
	SYS_LSTAT                   Sysno = 6
	SYS_POLL                    Sysno = 7
	SYS_LSEEK                   Sysno = 8
	SYS_MMAP                    Sysno = 9
	SYS_MPROTECT                Sysno = 10
	SYS_MUNMAP                  Sysno = 11
	SYS_BRK                     Sysno = 12
	SYS_RT_SIGACTION            Sysno = 13
	SYS_RT_SIGPROCMASK          Sysno = 14
	SYS_RT_SIGRETURN            Sysno = 15
	SYS_IOCTL                   Sysno = 16
	SYS_PREAD64                 Sysno = 17
	SYS_PWRITE64                Sysno = 18
	SYS_READV                   Sysno = 19
	SYS_WRITEV                  Sysno = 20
	SYS_ACCESS                  Sysno = 21
	SYS_PIPE                    Sysno = 22
	SYS_SELECT                  Sysno = 23
	SYS_SCHED_YIELD             Sysno = 24
	SYS_MREMAP                  Sysno = 25
	SYS_MSYNC                   Sysno = 26
	SYS_MINCORE                 Sysno = 27
	SYS_MADVISE                 Sysno = 28
	SYS_SHMGET                  Sysno = 29
	SYS_SHMAT                   Sysno = 30
	SYS_SHMCTL                  Sysno = 31
	SYS_DUP                     Sysno = 32
	SYS_DUP2                    Sysno = 33
	SYS_PAUSE                   Sysno = 34
	SYS_NANOSLEEP               Sysno = 35
	SYS_GETITIMER               Sysno = 36
	SYS_ALARM                   Sysno = 37
	SYS_SETITIMER               Sysno = 38
	SYS_GETPID                  Sysno = 39
	SYS_SENDFILE                Sysno = 40
	SYS_SOCKET                  Sysno = 41
	SYS_CONNECT                 Sysno = 42
	SYS_ACCEPT                  Sysno = 43
	SYS_SENDTO                  Sysno = 44
	SYS_RECVFROM                Sysno = 45
	SYS_SENDMSG                 Sysno = 46
	SYS_RECVMSG                 Sysno = 47
	SYS_SHUTDOWN                Sysno = 48
	SYS_BIND                    Sysno = 49
	SYS_LISTEN                  Sysno = 50
	SYS_GETSOCKNAME             Sysno = 51
	SYS_GETPEERNAME             Sysno = 52
	SYS_SOCKETPAIR              Sysno = 53
	SYS_SETSOCKOPT              Sysno = 54
	SYS_GETSOCKOPT              Sysno = 55
	SYS_CLONE                   Sysno = 56
	SYS_FORK                    Sysno = 57
	SYS_VFORK                   Sysno = 58
	SYS_EXECVE                  Sysno = 59
	SYS_EXIT                    Sysno = 60
	SYS_WAIT4                   Sysno = 61
	SYS_KILL                    Sysno = 62
	SYS_UNAME                   Sysno = 63
	SYS_SEMGET                  Sysno = 64
	SYS_SEMOP                   Sysno = 65
	SYS_SEMCTL                  Sysno = 66
	SYS_SHMDT                   Sysno = 67
	SYS_MSGGET                  Sysno = 68
	SYS_MSGSND                  Sysno = 69
	SYS_MSGRCV                  Sysno = 70
	SYS_MSGCTL                  Sysno = 71
	SYS_FCNTL                   Sysno = 72
	SYS_FLOCK                   Sysno = 73
	SYS_FSYNC                   Sysno = 74
	SYS_FDATASYNC               Sysno = 75
	SYS_TRUNCATE                Sysno = 76
	SYS_FTRUNCATE               Sysno = 77
	SYS_GETDENTS                Sysno = 78
	SYS_GETCWD                  Sysno = 79
	SYS_CHDIR                   Sysno = 80
	SYS_FCHDIR                  Sysno = 81
	SYS_RENAME                  Sysno = 82
	SYS_MKDIR                   Sysno = 83
	SYS_RMDIR                   Sysno = 84
	SYS_CREAT                   Sysno = 85
	SYS_LINK                    Sysno = 86
	SYS_UNLINK                  Sysno = 87
	SYS_SYMLINK                 Sysno = 88
	SYS_READLINK                Sysno = 89
	SYS_CHMOD                   Sysno = 90
	SYS_FCHMOD                  Sysno = 91
	SYS_CHOWN                   Sysno = 92
	SYS_FCHOWN                  Sysno = 93
	SYS_LCHOWN                  Sysno = 94
	SYS_UMASK                   Sysno = 95
	SYS_GETTIMEOFDAY            Sysno = 96
	SYS_GETRLIMIT               Sysno = 97
	SYS_GETRUSAGE               Sysno = 98
	SYS_SYSINFO                 Sysno = 99
	SYS_TIMES                   Sysno = 100
	SYS_PTRACE                  Sysno = 101
	SYS_GETUID                  Sysno = 102
	SYS_SYSLOG                  Sysno = 103
	SYS_GETGID                  Sysno = 104
	SYS_SETUID                  Sysno = 105
	SYS_SETGID                  Sysno = 106
	SYS_GETEUID                 Sysno = 107
	SYS_GETEGID                 Sysno = 108
	SYS_SETPGID                 Sysno = 109
	SYS_GETPPID                 Sysno = 110
	SYS_GETPGRP                 Sysno = 111
	SYS_SETSID                  Sysno = 112
	SYS_SETREUID                Sysno = 113
	SYS_SETREGID                Sysno = 114
	SYS_GETGROUPS               Sysno = 115
	SYS_SETGROUPS               Sysno = 116
	SYS_SETRESUID               Sysno = 117
	SYS_GETRESUID               Sysno = 118
	SYS_SETRESGID               Sysno = 119
	SYS_GETRESGID               Sysno = 120
	SYS_GETPGID                 Sysno = 121
	SYS_SETFSUID                Sysno = 122
	SYS_SETFSGID                Sysno = 123
	SYS_GETSID                  Sysno = 124
	SYS_CAPGET                  Sysno = 125
	SYS_CAPSET                  Sysno = 126
	SYS_RT_SIGPENDING           Sysno = 127
	SYS_RT_SIGTIMEDWAIT         Sysno = 128
	SYS_RT_SIGQUEUEINFO         Sysno = 129
	SYS_RT_SIGSUSPEND           Sysno = 130
	SYS_SIGALTSTACK             Sysno = 131
	SYS_UTIME                   Sysno = 132
	SYS_MKNOD                   Sysno = 133
	SYS_USELIB                  Sysno = 134
	SYS_PERSONALITY             Sysno = 135
	SYS_USTAT                   Sysno = 136
	SYS_STATFS                  Sysno = 137
	SYS_FSTATFS                 Sysno = 138
	SYS_SYSFS                   Sysno = 139
	SYS_GETPRIORITY             Sysno = 140
	SYS_SETPRIORITY             Sysno = 141
	SYS_SCHED_SETPARAM          Sysno = 142
	SYS_SCHED_GETPARAM          Sysno = 143
	SYS_SCHED_SETSCHEDULER      Sysno = 144
	SYS_SCHED_GETSCHEDULER      Sysno = 145
	SYS_SCHED_GET_PRIORITY_MAX  Sysno = 146
	SYS_SCHED_GET_PRIORITY_MIN  Sysno = 147
	SYS_SCHED_RR_GET_INTERVAL   Sysno = 148
	SYS_MLOCK                   Sysno = 149
	SYS_MUNLOCK                 Sysno = 150
	SYS_MLOCKALL                Sysno = 151
	SYS_MUNLOCKALL              Sysno = 152
	SYS_VHANGUP                 Sysno = 153
	SYS_MODIFY_LDT              Sysno = 154
	SYS_PIVOT_ROOT              Sysno = 155
	SYS__SYSCTL                 Sysno = 156
	SYS_PRCTL                   Sysno = 157
	SYS_ARCH_PRCTL              Sysno = 158
	SYS_ADJTIMEX                Sysno = 159
	SYS_SETRLIMIT               Sysno = 160
	SYS_CHROOT                  Sysno = 161
	SYS_SYNC                    Sysno = 162
	SYS_ACCT                    Sysno = 163
	SYS_SETTIMEOFDAY            Sysno = 164
	SYS_MOUNT                   Sysno = 165
	SYS_UMOUNT2                 Sysno = 166
	SYS_SWAPON                  Sysno = 167
	SYS_SWAPOFF                 Sysno = 168
	SYS_REBOOT                  Sysno = 169
	SYS_SETHOSTNAME             Sysno = 170
	SYS_SETDOMAINNAME           Sysno = 171
	SYS_IOPL                    Sysno = 172
	SYS_IOPERM                  Sysno = 173
	SYS_CREATE_MODULE           Sysno = 174
	SYS_INIT_MODULE             Sysno = 175
	SYS_DELETE_MODULE           Sysno = 176
	SYS_GET_KERNEL_SYMS         Sysno = 177
	SYS_QUERY_MODULE            Sysno = 178
	SYS_QUOTACTL                Sysno = 179
	SYS_NFSSERVCTL              Sysno = 180
	SYS_GETPMSG                 Sysno = 181
	SYS_PUTPMSG                 Sysno = 182
	SYS_AFS_SYSCALL             Sysno = 183
	SYS_TUXCALL                 Sysno = 184
	SYS_SECURITY                Sysno = 185
	SYS_GETTID                  Sysno = 186
	SYS_READAHEAD               Sysno = 187
	SYS_SETXATTR                Sysno = 188
	SYS_LSETXATTR               Sysno = 189
	SYS_FSETXATTR               Sysno = 190
	SYS_GETXATTR                Sysno = 191
	SYS_LGETXATTR               Sysno = 192
	SYS_FGETXATTR               Sysno = 193
	SYS_LISTXATTR               Sysno = 194
	SYS_LLISTXATTR              Sysno = 195
	SYS_FLISTXATTR              Sysno = 196
	SYS_REMOVEXATTR             Sysno = 197
	SYS_LREMOVEXATTR            Sysno = 198
	SYS_FREMOVEXATTR            Sysno = 199
	SYS_TKILL                   Sysno = 200
	SYS_TIME                    Sysno = 201
	SYS_FUTEX                   Sysno = 202
	SYS_SCHED_SETAFFINITY       Sysno = 203
	SYS_SCHED_GETAFFINITY       Sysno = 204
	SYS_SET_THREAD_AREA         Sysno = 205
	SYS_IO_SETUP                Sysno = 206
	SYS_IO_DESTROY              Sysno = 207
	SYS_IO_GETEVENTS            Sysno = 208
	SYS_IO_SUBMIT               Sysno = 209
	SYS_IO_CANCEL               Sysno = 210
	SYS_GET_THREAD_AREA         Sysno = 211
	SYS_LOOKUP_DCOOKIE          Sysno = 212
	SYS_EPOLL_CREATE            Sysno = 213
	SYS_EPOLL_CTL_OLD           Sysno = 214
	SYS_EPOLL_WAIT_OLD          Sysno = 215
	SYS_REMAP_FILE_PAGES        Sysno = 216
	SYS_GETDENTS64              Sysno = 217
	SYS_SET_TID_ADDRESS         Sysno = 218
	SYS_RESTART_SYSCALL         Sysno = 219
	SYS_SEMTIMEDOP              Sysno = 220
	SYS_FADVISE64               Sysno = 221
	SYS_TIMER_CREATE            Sysno = 222
	SYS_TIMER_SETTIME           Sysno = 223
	SYS_TIMER_GETTIME           Sysno = 224
	SYS_TIMER_GETOVERRUN        Sysno = 225
	SYS_TIMER_DELETE            Sysno = 226
	SYS_CLOCK_SETTIME           Sysno = 227
	SYS_CLOCK_GETTIME           Sysno = 228
	SYS_CLOCK_GETRES            Sysno = 229
	SYS_CLOCK_NANOSLEEP         Sysno = 230
	SYS_EXIT_GROUP              Sysno = 231
	SYS_EPOLL_WAIT              Sysno = 232
	SYS_EPOLL_CTL               Sysno = 233
	SYS_TGKILL                  Sysno = 234
	SYS_UTIMES                  Sysno = 235
	SYS_VSERVER                 Sysno = 236
	SYS_MBIND                   Sysno = 237
	SYS_SET_MEMPOLICY           Sysno = 238
	SYS_GET_MEMPOLICY           Sysno = 239
	SYS_MQ_OPEN                 Sysno = 240
	SYS_MQ_UNLINK               Sysno = 241
	SYS_MQ_TIMEDSEND            Sysno = 242
	SYS_MQ_TIMEDRECEIVE         Sysno = 243
	SYS_MQ_NOTIFY               Sysno = 244
	SYS_MQ_GETSETATTR           Sysno = 245
	SYS_KEXEC_LOAD              Sysno = 246
	SYS_WAITID                  Sysno = 247
	SYS_ADD_KEY                 Sysno = 248
	SYS_REQUEST_KEY             Sysno = 249
	SYS_KEYCTL                  Sysno = 250
	SYS_IOPRIO_SET              Sysno = 251
	SYS_IOPRIO_GET              Sysno = 252
	SYS_INOTIFY_INIT            Sysno = 253
	SYS_INOTIFY_ADD_WATCH       Sysno = 254
	SYS_INOTIFY_RM_WATCH        Sysno = 255
	SYS_MIGRATE_PAGES           Sysno = 256
	SYS_OPENAT                  Sysno = 257
	SYS_MKDIRAT                 Sysno = 258
	SYS_MKNODAT                 Sysno = 259
	SYS_FCHOWNAT                Sysno = 260
	SYS_FUTIMESAT               Sysno = 261
	SYS_NEWFSTATAT              Sysno = 262
	SYS_UNLINKAT                Sysno = 263
	SYS_RENAMEAT                Sysno = 264
	SYS_LINKAT                  Sysno = 265
	SYS_SYMLINKAT               Sysno = 266
	SYS_READLINKAT              Sysno = 267
	SYS_FCHMODAT                Sysno = 268
	SYS_FACCESSAT               Sysno = 269
	SYS_PSELECT6                Sysno = 270
	SYS_PPOLL                   Sysno = 271
	SYS_UNSHARE                 Sysno = 272
	SYS_SET_ROBUST_LIST         Sysno = 273
	SYS_GET_ROBUST_LIST         Sysno = 274
	SYS_SPLICE                  Sysno = 275
	SYS_TEE                     Sysno = 276
	SYS_SYNC_FILE_RANGE         Sysno = 277
	SYS_VMSPLICE                Sysno = 278
	SYS_MOVE_PAGES              Sysno = 279
	SYS_UTIMENSAT               Sysno = 280
	SYS_EPOLL_PWAIT             Sysno = 281
	SYS_SIGNALFD                Sysno = 282
	SYS_TIMERFD_CREATE          Sysno = 283
	SYS_EVENTFD                 Sysno = 284
	SYS_FALLOCATE               Sysno = 285
	SYS_TIMERFD_SETTIME         Sysno = 286
	SYS_TIMERFD_GETTIME         Sysno = 287
	SYS_ACCEPT4                 Sysno = 288
	SYS_SIGNALFD4               Sysno = 289
	SYS_EVENTFD2                Sysno = 290
	SYS_EPOLL_CREATE1           Sysno = 291
	SYS_DUP3                    Sysno = 292
	SYS_PIPE2                   Sysno = 293
	SYS_INOTIFY_INIT1           Sysno = 294
	SYS_PREADV                  Sysno = 295
	SYS_PWRITEV                 Sysno = 296
	SYS_RT_TGSIGQUEUEINFO       Sysno = 297
	SYS_PERF_EVENT_OPEN         Sysno = 298
	SYS_RECVMMSG                Sysno = 299
	SYS_FANOTIFY_INIT           Sysno = 300
	SYS_FANOTIFY_MARK           Sysno = 301
	SYS_PRLIMIT64               Sysno = 302
	SYS_NAME_TO_HANDLE_AT       Sysno = 303
	SYS_OPEN_BY_HANDLE_AT       Sysno = 304
	SYS_CLOCK_ADJTIME           Sysno = 305
	SYS_SYNCFS                  Sysno = 306
	SYS_SENDMMSG                Sysno = 307
	SYS_SETNS                   Sysno = 308
	SYS_GETCPU                  Sysno = 309
	SYS_PROCESS_VM_READV        Sysno = 310
	SYS_PROCESS_VM_WRITEV       Sysno = 311
	SYS_KCMP                    Sysno = 312
	SYS_FINIT_MODULE            Sysno = 313
	SYS_SCHED_SETATTR           Sysno = 314
	SYS_SCHED_GETATTR           Sysno = 315
	SYS_RENAMEAT2               Sysno = 316
	SYS_SECCOMP                 Sysno = 317
	SYS_GETRANDOM               Sysno = 318
	SYS_MEMFD_CREATE            Sysno = 319
	SYS_KEXEC_FILE_LOAD         Sysno = 320
	SYS_BPF                     Sysno = 321
	SYS_EXECVEAT                Sysno = 322
	SYS_USERFAULTFD             Sysno = 323
	SYS_MEMBARRIER              Sysno = 324
	SYS_MLOCK2                  Sysno = 325
	SYS_COPY_FILE_RANGE         Sysno = 326
	SYS_PREADV2                 Sysno = 327
	SYS_PWRITEV2                Sysno = 328
	SYS_PKEY_MPROTECT           Sysno = 329
	SYS_PKEY_ALLOC              Sysno = 330
	SYS_PKEY_FREE               Sysno = 331
	SYS_STATX                   Sysno = 332
	SYS_IO_PGETEVENTS           Sysno = 333
	SYS_RSEQ                    Sysno = 334
	SYS_URETPROBE               Sysno = 335
	SYS_UPROBE                  Sysno = 336
	SYS_PIDFD_SEND_SIGNAL       Sysno = 424
	SYS_IO_URING_SETUP          Sysno = 425
	SYS_IO_URING_ENTER          Sysno = 426
	SYS_IO_URING_REGISTER       Sysno = 427
	SYS_OPEN_TREE               Sysno = 428
	SYS_MOVE_MOUNT              Sysno = 429
	SYS_FSOPEN                  Sysno = 430
	SYS_FSCONFIG                Sysno = 431
	SYS_FSMOUNT                 Sysno = 432
	SYS_FSPICK                  Sysno = 433
	SYS_PIDFD_OPEN              Sysno = 434
	SYS_CLONE3                  Sysno = 435
	SYS_CLOSE_RANGE             Sysno = 436
	SYS_OPENAT2                 Sysno = 437
	SYS_PIDFD_GETFD             Sysno = 438
	SYS_FACCESSAT2              Sysno = 439
	SYS_PROCESS_MADVISE         Sysno = 440
	SYS_EPOLL_PWAIT2            Sysno = 441
	SYS_MOUNT_SETATTR           Sysno = 442
	SYS_QUOTACTL_FD             Sysno = 443
	SYS_LANDLOCK_CREATE_RULESET Sysno = 444
	SYS_LANDLOCK_ADD_RULE       Sysno = 445
	SYS_LANDLOCK_RESTRICT_SELF  Sysno = 446
	SYS_MEMFD_SECRET            Sysno = 447
	SYS_PROCESS_MRELEASE        Sysno = 448
	SYS_FUTEX_WAITV             Sysno = 449
	SYS_SET_MEMPOLICY_HOME_NODE Sysno = 450
	SYS_CACHESTAT               Sysno = 451
	SYS_FCHMODAT2               Sysno = 452
	SYS_MAP_SHADOW_STACK        Sysno = 453
	SYS_FUTEX_WAKE              Sysno = 454
	SYS_FUTEX_WAIT              Sysno = 455
	SYS_FUTEX_REQUEUE           Sysno = 456
	SYS_STATMOUNT               Sysno = 457
	SYS_LISTMOUNT               Sysno = 458
	SYS_LSM_GET_SELF_ATTR       Sysno = 459
	SYS_LSM_SET_SELF_ATTR       Sysno = 460
	SYS_LSM_LIST_MODULES        Sysno = 461
	SYS_MSEAL                   Sysno = 462
	SYS_SETXATTRAT              Sysno = 463
	SYS_GETXATTRAT              Sysno = 464
	SYS_LISTXATTRAT             Sysno = 465
	SYS_REMOVEXATTRAT           Sysno = 466
	SYS_OPEN_TREE_ATTR          Sysno = 467
	SYS_FILE_GETATTR            Sysno = 468
	SYS_FILE_SETATTR            Sysno = 469
	SYS_LISTNS                  Sysno = 470
	SYS_RSEQ_SLICE_YIELD        Sysno = 471
)

// sysnoNames maps a number to the name strace prints.
var sysnoNames = [...]string{
	SYS_READ:                    "read",
	SYS_WRITE:                   "write",
	SYS_OPEN:                    "open",
	SYS_CLOSE:                   "close",
	SYS_STAT:                    "stat",
	SYS_FSTAT:                   "fstat",
	SYS_LSTAT:                   "lstat",
	SYS_POLL:                    "poll",
	SYS_LSEEK:                   "lseek",
	SYS_MMAP:                    "mmap",
	SYS_MPROTECT:                "mprotect",
	SYS_MUNMAP:                  "munmap",
	SYS_BRK:                     "brk",
	SYS_RT_SIGACTION:            "rt_sigaction",
	SYS_RT_SIGPROCMASK:          "rt_sigprocmask",
	SYS_RT_SIGRETURN:            "rt_sigreturn",
	SYS_IOCTL:                   "ioctl",
	SYS_PREAD64:                 "pread64",
	SYS_PWRITE64:                "pwrite64",
	SYS_READV:                   "readv",
	SYS_WRITEV:                  "writev",
	SYS_ACCESS:                  "access",
	SYS_PIPE:                    "pipe",
	SYS_SELECT:                  "select",
	SYS_SCHED_YIELD:             "sched_yield",
	SYS_MREMAP:                  "mremap",
	SYS_MSYNC:                   "msync",
	SYS_MINCORE:                 "mincore",
	SYS_MADVISE:                 "madvise",
	SYS_SHMGET:                  "shmget",
	SYS_SHMAT:                   "shmat",
	SYS_SHMCTL:                  "shmctl",
	SYS_DUP:                     "dup",
	SYS_DUP2:                    "dup2",
	SYS_PAUSE:                   "pause",
	SYS_NANOSLEEP:               "nanosleep",
	SYS_GETITIMER:               "getitimer",
	SYS_ALARM:                   "alarm",
	SYS_SETITIMER:               "setitimer",
	SYS_GETPID:                  "getpid",
	SYS_SENDFILE:                "sendfile",
	SYS_SOCKET:                  "socket",
	SYS_CONNECT:                 "connect",
	SYS_ACCEPT:                  "accept",
	SYS_SENDTO:                  "sendto",
	SYS_RECVFROM:                "recvfrom",
	SYS_SENDMSG:                 "sendmsg",
	SYS_RECVMSG:                 "recvmsg",
	SYS_SHUTDOWN:                "shutdown",
	SYS_BIND:                    "bind",
	SYS_LISTEN:                  "listen",
	SYS_GETSOCKNAME:             "getsockname",
	SYS_GETPEERNAME:             "getpeername",
	SYS_SOCKETPAIR:              "socketpair",
	SYS_SETSOCKOPT:              "setsockopt",
	SYS_GETSOCKOPT:              "getsockopt",
	SYS_CLONE:                   "clone",
	SYS_FORK:                    "fork",
	SYS_VFORK:                   "vfork",
	SYS_EXECVE:                  "execve",
	SYS_EXIT:                    "exit",
	SYS_WAIT4:                   "wait4",
	SYS_KILL:                    "kill",
	SYS_UNAME:                   "uname",
	SYS_SEMGET:                  "semget",
	SYS_SEMOP:                   "semop",
	SYS_SEMCTL:                  "semctl",
	SYS_SHMDT:                   "shmdt",
	SYS_MSGGET:                  "msgget",
	SYS_MSGSND:                  "msgsnd",
	SYS_MSGRCV:                  "msgrcv",
	SYS_MSGCTL:                  "msgctl",
	SYS_FCNTL:                   "fcntl",
	SYS_FLOCK:                   "flock",
	SYS_FSYNC:                   "fsync",
	SYS_FDATASYNC:               "fdatasync",
	SYS_TRUNCATE:                "truncate",
	SYS_FTRUNCATE:               "ftruncate",
	SYS_GETDENTS:                "getdents",
	SYS_GETCWD:                  "getcwd",
	SYS_CHDIR:                   "chdir",
	SYS_FCHDIR:                  "fchdir",
	SYS_RENAME:                  "rename",
	SYS_MKDIR:                   "mkdir",
	SYS_RMDIR:                   "rmdir",
	SYS_CREAT:                   "creat",
	SYS_LINK:                    "link",
	SYS_UNLINK:                  "unlink",
	SYS_SYMLINK:                 "symlink",
	SYS_READLINK:                "readlink",
	SYS_CHMOD:                   "chmod",
	SYS_FCHMOD:                  "fchmod",
	SYS_CHOWN:                   "chown",
	SYS_FCHOWN:                  "fchown",
	SYS_LCHOWN:                  "lchown",
	SYS_UMASK:                   "umask",
	SYS_GETTIMEOFDAY:            "gettimeofday",
	SYS_GETRLIMIT:               "getrlimit",
	SYS_GETRUSAGE:               "getrusage",
	SYS_SYSINFO:                 "sysinfo",
	SYS_TIMES:                   "times",
	SYS_PTRACE:                  "ptrace",
	SYS_GETUID:                  "getuid",
	SYS_SYSLOG:                  "syslog",
	SYS_GETGID:                  "getgid",
	SYS_SETUID:                  "setuid",
	SYS_SETGID:                  "setgid",
	SYS_GETEUID:                 "geteuid",
	SYS_GETEGID:                 "getegid",
	SYS_SETPGID:                 "setpgid",
	SYS_GETPPID:                 "getppid",
	SYS_GETPGRP:                 "getpgrp",
	SYS_SETSID:                  "setsid",
	SYS_SETREUID:                "setreuid",
	SYS_SETREGID:                "setregid",
	SYS_GETGROUPS:               "getgroups",
	SYS_SETGROUPS:               "setgroups",
	SYS_SETRESUID:               "setresuid",
	SYS_GETRESUID:               "getresuid",
	SYS_SETRESGID:               "setresgid",
	SYS_GETRESGID:               "getresgid",
	SYS_GETPGID:                 "getpgid",
	SYS_SETFSUID:                "setfsuid",
	SYS_SETFSGID:                "setfsgid",
	SYS_GETSID:                  "getsid",
	SYS_CAPGET:                  "capget",
	SYS_CAPSET:                  "capset",
	SYS_RT_SIGPENDING:           "rt_sigpending",
	SYS_RT_SIGTIMEDWAIT:         "rt_sigtimedwait",
	SYS_RT_SIGQUEUEINFO:         "rt_sigqueueinfo",
	SYS_RT_SIGSUSPEND:           "rt_sigsuspend",
	SYS_SIGALTSTACK:             "sigaltstack",
	SYS_UTIME:                   "utime",
	SYS_MKNOD:                   "mknod",
	SYS_USELIB:                  "uselib",
	SYS_PERSONALITY:             "personality",
	SYS_USTAT:                   "ustat",
	SYS_STATFS:                  "statfs",
	SYS_FSTATFS:                 "fstatfs",
	SYS_SYSFS:                   "sysfs",
	SYS_GETPRIORITY:             "getpriority",
	SYS_SETPRIORITY:             "setpriority",
	SYS_SCHED_SETPARAM:          "sched_setparam",
	SYS_SCHED_GETPARAM:          "sched_getparam",
	SYS_SCHED_SETSCHEDULER:      "sched_setscheduler",
	SYS_SCHED_GETSCHEDULER:      "sched_getscheduler",
	SYS_SCHED_GET_PRIORITY_MAX:  "sched_get_priority_max",
	SYS_SCHED_GET_PRIORITY_MIN:  "sched_get_priority_min",
	SYS_SCHED_RR_GET_INTERVAL:   "sched_rr_get_interval",
	SYS_MLOCK:                   "mlock",
	SYS_MUNLOCK:                 "munlock",
	SYS_MLOCKALL:                "mlockall",
	SYS_MUNLOCKALL:              "munlockall",
	SYS_VHANGUP:                 "vhangup",
	SYS_MODIFY_LDT:              "modify_ldt",
	SYS_PIVOT_ROOT:              "pivot_root",
	SYS__SYSCTL:                 "_sysctl",
	SYS_PRCTL:                   "prctl",
	SYS_ARCH_PRCTL:              "arch_prctl",
	SYS_ADJTIMEX:                "adjtimex",
	SYS_SETRLIMIT:               "setrlimit",
	SYS_CHROOT:                  "chroot",
	SYS_SYNC:                    "sync",
	SYS_ACCT:                    "acct",
	SYS_SETTIMEOFDAY:            "settimeofday",
	SYS_MOUNT:                   "mount",
	SYS_UMOUNT2:                 "umount2",
	SYS_SWAPON:                  "swapon",
	SYS_SWAPOFF:                 "swapoff",
	SYS_REBOOT:                  "reboot",
	SYS_SETHOSTNAME:             "sethostname",
	SYS_SETDOMAINNAME:           "setdomainname",
	SYS_IOPL:                    "iopl",
	SYS_IOPERM:                  "ioperm",
	SYS_CREATE_MODULE:           "create_module",
	SYS_INIT_MODULE:             "init_module",
	SYS_DELETE_MODULE:           "delete_module",
	SYS_GET_KERNEL_SYMS:         "get_kernel_syms",
	SYS_QUERY_MODULE:            "query_module",
	SYS_QUOTACTL:                "quotactl",
	SYS_NFSSERVCTL:              "nfsservctl",
	SYS_GETPMSG:                 "getpmsg",
	SYS_PUTPMSG:                 "putpmsg",
	SYS_AFS_SYSCALL:             "afs_syscall",
	SYS_TUXCALL:                 "tuxcall",
	SYS_SECURITY:                "security",
	SYS_GETTID:                  "gettid",
	SYS_READAHEAD:               "readahead",
	SYS_SETXATTR:                "setxattr",
	SYS_LSETXATTR:               "lsetxattr",
	SYS_FSETXATTR:               "fsetxattr",
	SYS_GETXATTR:                "getxattr",
	SYS_LGETXATTR:               "lgetxattr",
	SYS_FGETXATTR:               "fgetxattr",
	SYS_LISTXATTR:               "listxattr",
	SYS_LLISTXATTR:              "llistxattr",
	SYS_FLISTXATTR:              "flistxattr",
	SYS_REMOVEXATTR:             "removexattr",
	SYS_LREMOVEXATTR:            "lremovexattr",
	SYS_FREMOVEXATTR:            "fremovexattr",
	SYS_TKILL:                   "tkill",
	SYS_TIME:                    "time",
	SYS_FUTEX:                   "futex",
	SYS_SCHED_SETAFFINITY:       "sched_setaffinity",
	SYS_SCHED_GETAFFINITY:       "sched_getaffinity",
	SYS_SET_THREAD_AREA:         "set_thread_area",
	SYS_IO_SETUP:                "io_setup",
	SYS_IO_DESTROY:              "io_destroy",
	SYS_IO_GETEVENTS:            "io_getevents",
	SYS_IO_SUBMIT:               "io_submit",
	SYS_IO_CANCEL:               "io_cancel",
	SYS_GET_THREAD_AREA:         "get_thread_area",
	SYS_LOOKUP_DCOOKIE:          "lookup_dcookie",
	SYS_EPOLL_CREATE:            "epoll_create",
	SYS_EPOLL_CTL_OLD:           "epoll_ctl_old",
	SYS_EPOLL_WAIT_OLD:          "epoll_wait_old",
	SYS_REMAP_FILE_PAGES:        "remap_file_pages",
	SYS_GETDENTS64:              "getdents64",
	SYS_SET_TID_ADDRESS:         "set_tid_address",
	SYS_RESTART_SYSCALL:         "restart_syscall",
	SYS_SEMTIMEDOP:              "semtimedop",
	SYS_FADVISE64:               "fadvise64",
	SYS_TIMER_CREATE:            "timer_create",
	SYS_TIMER_SETTIME:           "timer_settime",
	SYS_TIMER_GETTIME:           "timer_gettime",
	SYS_TIMER_GETOVERRUN:        "timer_getoverrun",
	SYS_TIMER_DELETE:            "timer_delete",
	SYS_CLOCK_SETTIME:           "clock_settime",
	SYS_CLOCK_GETTIME:           "clock_gettime",
	SYS_CLOCK_GETRES:            "clock_getres",
	SYS_CLOCK_NANOSLEEP:         "clock_nanosleep",
	SYS_EXIT_GROUP:              "exit_group",
	SYS_EPOLL_WAIT:              "epoll_wait",
	SYS_EPOLL_CTL:               "epoll_ctl",
	SYS_TGKILL:                  "tgkill",
	SYS_UTIMES:                  "utimes",
	SYS_VSERVER:                 "vserver",
	SYS_MBIND:                   "mbind",
	SYS_SET_MEMPOLICY:           "set_mempolicy",
	SYS_GET_MEMPOLICY:           "get_mempolicy",
	SYS_MQ_OPEN:                 "mq_open",
	SYS_MQ_UNLINK:               "mq_unlink",
	SYS_MQ_TIMEDSEND:            "mq_timedsend",
	SYS_MQ_TIMEDRECEIVE:         "mq_timedreceive",
	SYS_MQ_NOTIFY:               "mq_notify",
	SYS_MQ_GETSETATTR:           "mq_getsetattr",
	SYS_KEXEC_LOAD:              "kexec_load",
	SYS_WAITID:                  "waitid",
	SYS_ADD_KEY:                 "add_key",
	SYS_REQUEST_KEY:             "request_key",
	SYS_KEYCTL:                  "keyctl",
	SYS_IOPRIO_SET:              "ioprio_set",
	SYS_IOPRIO_GET:              "ioprio_get",
	SYS_INOTIFY_INIT:            "inotify_init",
	SYS_INOTIFY_ADD_WATCH:       "inotify_add_watch",
	SYS_INOTIFY_RM_WATCH:        "inotify_rm_watch",
	SYS_MIGRATE_PAGES:           "migrate_pages",
	SYS_OPENAT:                  "openat",
	SYS_MKDIRAT:                 "mkdirat",
	SYS_MKNODAT:                 "mknodat",
	SYS_FCHOWNAT:                "fchownat",
	SYS_FUTIMESAT:               "futimesat",
	SYS_NEWFSTATAT:              "newfstatat",
	SYS_UNLINKAT:                "unlinkat",
	SYS_RENAMEAT:                "renameat",
	SYS_LINKAT:                  "linkat",
	SYS_SYMLINKAT:               "symlinkat",
	SYS_READLINKAT:              "readlinkat",
	SYS_FCHMODAT:                "fchmodat",
	SYS_FACCESSAT:               "faccessat",
	SYS_PSELECT6:                "pselect6",
	SYS_PPOLL:                   "ppoll",
	SYS_UNSHARE:                 "unshare",
	SYS_SET_ROBUST_LIST:         "set_robust_list",
	SYS_GET_ROBUST_LIST:         "get_robust_list",
	SYS_SPLICE:                  "splice",
	SYS_TEE:                     "tee",
	SYS_SYNC_FILE_RANGE:         "sync_file_range",
	SYS_VMSPLICE:                "vmsplice",
	SYS_MOVE_PAGES:              "move_pages",
	SYS_UTIMENSAT:               "utimensat",
	SYS_EPOLL_PWAIT:             "epoll_pwait",
	SYS_SIGNALFD:                "signalfd",
	SYS_TIMERFD_CREATE:          "timerfd_create",
	SYS_EVENTFD:                 "eventfd",
	SYS_FALLOCATE:               "fallocate",
	SYS_TIMERFD_SETTIME:         "timerfd_settime",
	SYS_TIMERFD_GETTIME:         "timerfd_gettime",
	SYS_ACCEPT4:                 "accept4",
	SYS_SIGNALFD4:               "signalfd4",
	SYS_EVENTFD2:                "eventfd2",
	SYS_EPOLL_CREATE1:           "epoll_create1",
	SYS_DUP3:                    "dup3",
	SYS_PIPE2:                   "pipe2",
	SYS_INOTIFY_INIT1:           "inotify_init1",
	SYS_PREADV:                  "preadv",
	SYS_PWRITEV:                 "pwritev",
	SYS_RT_TGSIGQUEUEINFO:       "rt_tgsigqueueinfo",
	SYS_PERF_EVENT_OPEN:         "perf_event_open",
	SYS_RECVMMSG:                "recvmmsg",
	SYS_FANOTIFY_INIT:           "fanotify_init",
	SYS_FANOTIFY_MARK:           "fanotify_mark",
	SYS_PRLIMIT64:               "prlimit64",
	SYS_NAME_TO_HANDLE_AT:       "name_to_handle_at",
	SYS_OPEN_BY_HANDLE_AT:       "open_by_handle_at",
	SYS_CLOCK_ADJTIME:           "clock_adjtime",
	SYS_SYNCFS:                  "syncfs",
	SYS_SENDMMSG:                "sendmmsg",
	SYS_SETNS:                   "setns",
	SYS_GETCPU:                  "getcpu",
	SYS_PROCESS_VM_READV:        "process_vm_readv",
	SYS_PROCESS_VM_WRITEV:       "process_vm_writev",
	SYS_KCMP:                    "kcmp",
	SYS_FINIT_MODULE:            "finit_module",
	SYS_SCHED_SETATTR:           "sched_setattr",
	SYS_SCHED_GETATTR:           "sched_getattr",
	SYS_RENAMEAT2:               "renameat2",
	SYS_SECCOMP:                 "seccomp",
	SYS_GETRANDOM:               "getrandom",
	SYS_MEMFD_CREATE:            "memfd_create",
	SYS_KEXEC_FILE_LOAD:         "kexec_file_load",
	SYS_BPF:                     "bpf",
	SYS_EXECVEAT:                "execveat",
	SYS_USERFAULTFD:             "userfaultfd",
	SYS_MEMBARRIER:              "membarrier",
	SYS_MLOCK2:                  "mlock2",
	SYS_COPY_FILE_RANGE:         "copy_file_range",
	SYS_PREADV2:                 "preadv2",
	SYS_PWRITEV2:                "pwritev2",
	SYS_PKEY_MPROTECT:           "pkey_mprotect",
	SYS_PKEY_ALLOC:              "pkey_alloc",
	SYS_PKEY_FREE:               "pkey_free",
	SYS_STATX:                   "statx",
	SYS_IO_PGETEVENTS:           "io_pgetevents",
	SYS_RSEQ:                    "rseq",
	SYS_URETPROBE:               "uretprobe",
	SYS_UPROBE:                  "uprobe",
	SYS_PIDFD_SEND_SIGNAL:       "pidfd_send_signal",
	SYS_IO_URING_SETUP:          "io_uring_setup",
	SYS_IO_URING_ENTER:          "io_uring_enter",
	SYS_IO_URING_REGISTER:       "io_uring_register",
	SYS_OPEN_TREE:               "open_tree",
	SYS_MOVE_MOUNT:              "move_mount",
	SYS_FSOPEN:                  "fsopen",
	SYS_FSCONFIG:                "fsconfig",
	SYS_FSMOUNT:                 "fsmount",
	SYS_FSPICK:                  "fspick",
	SYS_PIDFD_OPEN:              "pidfd_open",
	SYS_CLONE3:                  "clone3",
	SYS_CLOSE_RANGE:             "close_range",
	SYS_OPENAT2:                 "openat2",
	SYS_PIDFD_GETFD:             "pidfd_getfd",
	SYS_FACCESSAT2:              "faccessat2",
	SYS_PROCESS_MADVISE:         "process_madvise",
	SYS_EPOLL_PWAIT2:            "epoll_pwait2",
	SYS_MOUNT_SETATTR:           "mount_setattr",
	SYS_QUOTACTL_FD:             "quotactl_fd",
	SYS_LANDLOCK_CREATE_RULESET: "landlock_create_ruleset",
	SYS_LANDLOCK_ADD_RULE:       "landlock_add_rule",
	SYS_LANDLOCK_RESTRICT_SELF:  "landlock_restrict_self",
	SYS_MEMFD_SECRET:            "memfd_secret",
	SYS_PROCESS_MRELEASE:        "process_mrelease",
	SYS_FUTEX_WAITV:             "futex_waitv",
	SYS_SET_MEMPOLICY_HOME_NODE: "set_mempolicy_home_node",
	SYS_CACHESTAT:               "cachestat",
	SYS_FCHMODAT2:               "fchmodat2",
	SYS_MAP_SHADOW_STACK:        "map_shadow_stack",
	SYS_FUTEX_WAKE:              "futex_wake",
	SYS_FUTEX_WAIT:              "futex_wait",
	SYS_FUTEX_REQUEUE:           "futex_requeue",
	SYS_STATMOUNT:               "statmount",
	SYS_LISTMOUNT:               "listmount",
	SYS_LSM_GET_SELF_ATTR:       "lsm_get_self_attr",
	SYS_LSM_SET_SELF_ATTR:       "lsm_set_self_attr",
	SYS_LSM_LIST_MODULES:        "lsm_list_modules",
	SYS_MSEAL:                   "mseal",
	SYS_SETXATTRAT:              "setxattrat",
	SYS_GETXATTRAT:              "getxattrat",
	SYS_LISTXATTRAT:             "listxattrat",
	SYS_REMOVEXATTRAT:           "removexattrat",
	SYS_OPEN_TREE_ATTR:          "open_tree_attr",
	SYS_FILE_GETATTR:            "file_getattr",
	SYS_FILE_SETATTR:            "file_setattr",
	SYS_LISTNS:                  "listns",
	SYS_RSEQ_SLICE_YIELD:        "rseq_slice_yield",
}
