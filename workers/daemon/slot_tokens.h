// SlotTokens: a worker's slots as lock files, one per slot, so that a job
// child that shrinks a finding can borrow the slots no job uses: each slot
// it can lock is one more shrinking candidate rerun at once. The daemon
// locks a slot's file for every job it starts and leases only as many
// jobs as there are files nobody holds, so a borrowed slot is busy to it
// until the child gives it back — when shrinking ends, or when the child
// dies (the kernel drops its locks: a crashed child never keeps a slot).
//
// Locks are flock(2) locks on separate open file descriptions, so the
// daemon's own probe conflicts with its own held locks as with a child's;
// every descriptor is close-on-exec, so no child inherits the daemon's.
// A job leased while a child was borrowing may find no file free when it
// starts: it runs all the same (briefly one job over the slots) without a
// token.
#ifndef DUALSWARM_WORKERS_DAEMON_SLOT_TOKENS_H_
#define DUALSWARM_WORKERS_DAEMON_SLOT_TOKENS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dualswarm::workers {

// One held slot file; closing it (destructor) gives the slot back.
class SlotToken {
 public:
  SlotToken() = default;
  explicit SlotToken(int fd) : fd_(fd) {}
  SlotToken(SlotToken&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  SlotToken& operator=(SlotToken&& other) noexcept;
  SlotToken(const SlotToken&) = delete;
  SlotToken& operator=(const SlotToken&) = delete;
  ~SlotToken();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// The directory's slot files: `slots` of them, created if missing.
absl::Status CreateSlotFiles(const std::string& dir, int slots);

// Locks a slot file nobody holds; an empty token when every one is held.
SlotToken HoldFreeSlot(const std::string& dir, int slots);
// Locks up to `most` slot files nobody holds.
std::vector<SlotToken> BorrowFreeSlots(const std::string& dir, int slots, int most);
// How many slot files nobody holds right now.
int CountFreeSlots(const std::string& dir, int slots);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_DAEMON_SLOT_TOKENS_H_
