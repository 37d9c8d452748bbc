/* The headline's floor: the least any server can do for the slow-upstream experiment's load, so the
   table shows how much of a login's p99 is the client's own. Not an app: one thread, epoll,
   keep-alive, canned bytes, no HTTP parsing beyond finding "GET /login". /login answers 200 "ok\n"
   at once (fewer headers than either app sends). /chat plays what the llm compartment (limit 10,
   max-queue 20, max-wait 1 s) does to this load, without an upstream: the first LIMIT chats in flight
   answer 200 after HOLD_MS (the upstream's delay), the next QUEUE answer 503 after WAIT_MS (no slot
   frees before then, as HOLD_MS > WAIT_MS), the rest 503 at once. headline.py --floor compiles it
   with gcc and runs `floor PORT`. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#define LIMIT 10
#define QUEUE 20
#define HOLD_MS 3000
#define WAIT_MS 1000
#define MAXT 4096
static const char OK[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
static const char CHAT[] = "HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\na slow answer\n";
static const char BUSY[] = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 9\r\n\r\nllm busy\n";
struct timer { long long at; int fd; int held; };
static struct timer timers[MAXT]; static int ntimers, active, waiting;
static long long now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000LL + t.tv_nsec / 1000000; }
static void put(int fd, const char *s, size_t n) { (void)!write(fd, s, n); }
int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 3000;
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(port); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(ls, (void *)&a, sizeof a) || listen(ls, 1024)) { perror("listen"); return 1; }
  int ep = epoll_create1(0); struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls}; epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
  struct epoll_event evs[256]; char buf[8192];
  for (;;) {
    long long t = now_ms(), next = -1;
    for (int i = 0; i < ntimers; i++) if (next < 0 || timers[i].at < next) next = timers[i].at;
    int n = epoll_wait(ep, evs, 256, next < 0 ? -1 : (int)(next > t ? next - t : 0));
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd == ls) {
        int c; while ((c = accept4(ls, 0, 0, SOCK_NONBLOCK)) >= 0) {
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          struct epoll_event ce = {.events = EPOLLIN, .data.fd = c}; epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
        }
        continue;
      }
      ssize_t r = read(fd, buf, sizeof buf - 1);
      if (r <= 0) { if (r == 0 || errno != EAGAIN) close(fd); continue; }
      buf[r] = 0;
      for (char *p = buf; (p = strstr(p, "GET ")) != NULL; p += 4) { /* one answer per request head */
        if (!strncmp(p + 4, "/login", 6)) put(fd, OK, sizeof OK - 1);
        else if (active < LIMIT && ntimers < MAXT) { active++; timers[ntimers++] = (struct timer){now_ms() + HOLD_MS, fd, 1}; }
        else if (waiting < QUEUE && ntimers < MAXT) { waiting++; timers[ntimers++] = (struct timer){now_ms() + WAIT_MS, fd, 0}; }
        else put(fd, BUSY, sizeof BUSY - 1);
      }
    }
    t = now_ms();
    for (int i = 0; i < ntimers;) {
      if (timers[i].at <= t) {
        if (timers[i].held) { put(timers[i].fd, CHAT, sizeof CHAT - 1); active--; }
        else { put(timers[i].fd, BUSY, sizeof BUSY - 1); waiting--; }
        timers[i] = timers[--ntimers];
      } else i++;
    }
  }
}
