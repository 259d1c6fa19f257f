#include "workers/daemon/slot_tokens.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dualswarm::workers {
namespace {

std::string SlotFile(const std::string& dir, int slot) { return absl::StrCat(dir, "/slot-", slot, ".lock"); }

// Slot `slot`'s file locked by a new open file description; -1 when
// another holds it (or it cannot be opened).
int TryLock(const std::string& dir, int slot) {
  const int fd = ::open(SlotFile(dir, slot).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

SlotToken& SlotToken::operator=(SlotToken&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

SlotToken::~SlotToken() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status CreateSlotFiles(const std::string& dir, int slots) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  for (int slot = 0; slot < slots; ++slot) {
    const int fd = ::open(SlotFile(dir, slot).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
      return absl::InternalError(absl::StrCat("cannot create ", SlotFile(dir, slot), ": ", std::strerror(errno)));
    ::close(fd);
  }
  return absl::OkStatus();
}

std::vector<SlotToken> BorrowFreeSlots(const std::string& dir, int slots, int most) {
  std::vector<SlotToken> borrowed;
  for (int slot = 0; slot < slots && static_cast<int>(borrowed.size()) < most; ++slot)
    if (const int fd = TryLock(dir, slot); fd >= 0) borrowed.emplace_back(fd);
  return borrowed;
}

SlotToken HoldFreeSlot(const std::string& dir, int slots) {
  std::vector<SlotToken> one = BorrowFreeSlots(dir, slots, 1);
  return one.empty() ? SlotToken() : std::move(one.front());
}

int CountFreeSlots(const std::string& dir, int slots) {
  int free = 0;
  for (int slot = 0; slot < slots; ++slot) {
    if (const int fd = TryLock(dir, slot); fd >= 0) {
      ++free;
      ::close(fd);  // drops the lock
    }
  }
  return free;
}

}  // namespace dualswarm::workers
