/*-------------------------------------------------------------------------
 *
 * pthread.h
 *	  The few POSIX thread calls the client library makes (a lock around
 *	  the core's sizing, a one-time locale), for the WebAssembly build of
 *	  node/: Debian's wasi-libc targets WebAssembly without threads and has
 *	  no pthread.h.  An instance of the module runs on one thread (a
 *	  JavaScript agent), so a lock has nothing to exclude and a once is a
 *	  flag.  Found first on the include path of that build only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFN_PTHREAD_H
#define BFN_PTHREAD_H

typedef int pthread_mutex_t;
typedef int pthread_once_t;

#define PTHREAD_MUTEX_INITIALIZER 0
#define PTHREAD_ONCE_INIT 0

static inline int
pthread_mutex_lock(pthread_mutex_t *mutex)
{
	(void) mutex;
	return 0;
}

static inline int
pthread_mutex_unlock(pthread_mutex_t *mutex)
{
	(void) mutex;
	return 0;
}

static inline int
pthread_once(pthread_once_t *once, void (*routine) (void))
{
	if (*once == 0)
	{
		*once = 1;
		routine();
	}
	return 0;
}

#endif							/* BFN_PTHREAD_H */
