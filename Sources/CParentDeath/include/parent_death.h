#ifndef FLINT_PARENT_DEATH_H
#define FLINT_PARENT_DEATH_H

/* Asks the kernel to send `signal` to this process when the thread that spawned it ends
 * (Linux's PR_SET_PDEATHSIG, which survives exec). prctl is variadic, so Swift cannot call it
 * itself. Returns 0, or -1 with errno set (ENOSYS where the kernel has no such request). */
int flint_signal_on_parent_death(int signal);

#endif
