/* The least a server can do for wrk's sequential writes: a loop that answers each read from the
 * connection with one fixed HTTP response, without parsing anything. wrk sends one small
 * request at a time and waits for its answer, so each read is one request. Its rate is what
 * this machine's loopback and scheduler allow one connection.
 *
 * By default the loop blocks in read() between requests, as an event loop blocks in
 * epoll_wait. Given a number of microseconds, it first polls the socket that long without
 * sleeping, which saves the wake-up of an idle CPU when the next request comes soon.
 *   cc -O2 -o floor bench/roundtrip-floor.c && ./floor [poll-µs]   (prints "listening on HOST:PORT") */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* One request's bytes: polled for up to `poll_ns` first, then waited for. */
static ssize_t next_request(int connection, char *buffer, size_t size, long long poll_ns) {
    long long deadline = now_ns() + poll_ns;
    while (poll_ns > 0 && now_ns() < deadline) {
        ssize_t n = recv(connection, buffer, size, MSG_DONTWAIT);
        if (n >= 0 || errno != EAGAIN) return n;
    }
    return recv(connection, buffer, size, 0);
}

int main(int argc, char **argv) {
    long long poll_ns = argc > 1 ? atoll(argv[1]) * 1000 : 0;
    int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 8) ||
        getsockname(listener, (struct sockaddr *)&address, &length)) {
        perror("floor");
        return 1;
    }
    printf("listening on 127.0.0.1:%d\n", ntohs(address.sin_port));
    fflush(stdout);
    static char buffer[1 << 16];
    for (;;) {
        int connection = accept(listener, 0, 0);
        if (connection < 0) continue;
        setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        while (next_request(connection, buffer, sizeof buffer, poll_ns) > 0) {
            if (write(connection, answer, sizeof answer - 1) < 0) break;
        }
        close(connection);
    }
}
