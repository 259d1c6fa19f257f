// Who listens on a port: checks that the server a launched SUT's port
// answers on belongs to that SUT, i.e. to a process of the session its
// launch command runs in (launcher.h). A port accepts connections when the
// SUT listens there, but also when another program took the port while the
// SUT was down and the SUT, failing to bind, is about to exit; answers
// from that stranger must never be judged as the SUT's.
//
// Linux only: listeners come from /proc/net/tcp and /proc/net/tcp6, their
// holders from /proc/PID/fd. When nothing can be said — no listener on the
// port shows there (another network namespace), a process of the SUT's
// session has fds this user cannot read (a server that dropped its
// privileges), or the holder is not visible — the check passes.
#ifndef DUALSWARM_WORKERS_SUT_PORT_OWNER_H_
#define DUALSWARM_WORKERS_SUT_PORT_OWNER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dualswarm::workers {

// Up to `max_bytes` of a /proc file (whose size stat reports as 0); empty
// when it cannot be read (the process is gone, or not ours to see). Never
// throws, also when the process exits while its file is read.
std::string ReadProcFile(const std::string& path, size_t max_bytes);

// The socket inodes listening on TCP `port` (any address), from the text
// of /proc/net/tcp or /proc/net/tcp6.
std::vector<unsigned long> ListeningInodes(const std::string& proc_net_tcp, int port);

// OK when a process of session `session` holds a socket listening on
// `port`, or nothing can be said (above); Unavailable naming the visible
// holder outside the session otherwise: the machine's fault, not the
// SUT's.
absl::Status CheckSessionListensOn(pid_t session, int port);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_PORT_OWNER_H_
