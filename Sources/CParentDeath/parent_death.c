#include "parent_death.h"

#include <errno.h>

#if defined(__linux__)
#include <sys/prctl.h>

int flint_signal_on_parent_death(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}
#else
int flint_signal_on_parent_death(int signal) {
    (void)signal;
    errno = ENOSYS;
    return -1;
}
#endif
