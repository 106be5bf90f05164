// clockshift: an LD_PRELOAD library that moves a process's wall clock by an
// offset read from a file, so a scenario can jump one Redis server's clock
// forward at run time. Only CLOCK_REALTIME (and gettimeofday/time) move; the
// monotonic clocks stay true, as they would under an NTP step.
//
// Why not libfaketime: Debian's redis-server is linked with jemalloc, whose
// start-up calls clock_gettime before libfaketime has initialised, and
// libfaketime then aborts with "unexpected recursive calls". This shim never
// allocates and never calls dlsym: it reads the real clock with raw system
// calls, so there is nothing to recurse into.
//
// LOCKLAB_CLOCK_OFFSET_FILE names a file holding a signed offset in
// milliseconds; it is re-read at most every 5ms of monotonic time.
#define _GNU_SOURCE
#pragma GCC diagnostic ignored "-Wnonnull-compare"
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t offset_ns;
static volatile int64_t next_read_ns;

static int64_t raw_ns(clockid_t id) {
	struct timespec ts;
	syscall(SYS_clock_gettime, id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t current_offset(void) {
	int64_t now = raw_ns(CLOCK_MONOTONIC);
	if (now < __atomic_load_n(&next_read_ns, __ATOMIC_RELAXED)) {
		return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&next_read_ns, now + 5000000LL, __ATOMIC_RELAXED);
	const char *path = getenv("LOCKLAB_CLOCK_OFFSET_FILE");
	if (path == NULL) {
		return 0;
	}
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
	}
	char buf[32];
	long n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n <= 0) {
		return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
	}
	buf[n] = 0;
	int64_t ms = 0;
	int neg = 0;
	char *p = buf;
	if (*p == '-' || *p == '+') {
		neg = (*p == '-');
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		ms = ms * 10 + (*p - '0');
	}
	int64_t off = (neg ? -ms : ms) * 1000000LL;
	__atomic_store_n(&offset_ns, off, __ATOMIC_RELAXED);
	return off;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	long r = syscall(SYS_clock_gettime, id, ts);
	if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
		int64_t t = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec + current_offset();
		ts->tv_sec = t / 1000000000LL;
		ts->tv_nsec = t % 1000000000LL;
	}
	return (int)r;
}

int gettimeofday(struct timeval *tv, void *tz) {
	(void)tz;
	if (tv == NULL) {
		return 0;
	}
	int64_t t = raw_ns(CLOCK_REALTIME) + current_offset();
	tv->tv_sec = t / 1000000000LL;
	tv->tv_usec = (t % 1000000000LL) / 1000;
	return 0;
}

time_t time(time_t *out) {
	time_t t = (time_t)((raw_ns(CLOCK_REALTIME) + current_offset()) / 1000000000LL);
	if (out != NULL) {
		*out = t;
	}
	return t;
}
