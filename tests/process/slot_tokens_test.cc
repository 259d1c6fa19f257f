// A worker's slot files (workers/daemon/slot_tokens.h): a held slot is
// neither free nor borrowable, a borrower takes only the free ones and at
// most as many as it asks for, and a token gives its slot back when it
// goes — including when the process holding it dies.
#include "workers/daemon/slot_tokens.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/processes.h"

namespace dualswarm::workers {
namespace {

class SlotTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = dualswarm::testing::MakeTempDir("ds-slots");
    ASSERT_FALSE(dir_.empty());
    ASSERT_TRUE(CreateSlotFiles(dir_ + "/slots", 3).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string slots() const { return dir_ + "/slots"; }
  std::string dir_;
};

TEST_F(SlotTokensTest, HeldSlotsAreNeitherFreeNorBorrowed) {
  EXPECT_EQ(CountFreeSlots(slots(), 3), 3);
  SlotToken job = HoldFreeSlot(slots(), 3);
  ASSERT_TRUE(job.held());
  EXPECT_EQ(CountFreeSlots(slots(), 3), 2);
  std::vector<SlotToken> borrowed = BorrowFreeSlots(slots(), 3, 16);
  EXPECT_EQ(borrowed.size(), 2u);
  EXPECT_EQ(CountFreeSlots(slots(), 3), 0);
  EXPECT_FALSE(HoldFreeSlot(slots(), 3).held()) << "a job took a borrowed slot";
  borrowed.pop_back();
  EXPECT_EQ(CountFreeSlots(slots(), 3), 1);
  job = SlotToken();
  EXPECT_EQ(CountFreeSlots(slots(), 3), 2);
}

TEST_F(SlotTokensTest, ABorrowerTakesNoMoreThanItAsksFor) {
  std::vector<SlotToken> borrowed = BorrowFreeSlots(slots(), 3, 1);
  EXPECT_EQ(borrowed.size(), 1u);
  EXPECT_EQ(CountFreeSlots(slots(), 3), 2);
  EXPECT_TRUE(BorrowFreeSlots(slots(), 3, 0).empty());
}

TEST_F(SlotTokensTest, ADeadBorrowerGivesItsSlotsBack) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::vector<SlotToken> borrowed = BorrowFreeSlots(slots(), 3, 2);
    const char n = static_cast<char>(borrowed.size());
    (void)!::write(ready[1], &n, 1);
    ::pause();  // killed holding them
    ::_exit(0);
  }
  ::close(ready[1]);
  char n = 0;
  ASSERT_EQ(::read(ready[0], &n, 1), 1);
  ::close(ready[0]);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(CountFreeSlots(slots(), 3), 1);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(CountFreeSlots(slots(), 3), 3);
}

TEST_F(SlotTokensTest, MissingSlotFilesAreNeverFree) {
  EXPECT_EQ(CountFreeSlots(dir_ + "/nowhere", 3), 0);
  EXPECT_TRUE(BorrowFreeSlots(dir_ + "/nowhere", 3, 3).empty());
}

}  // namespace
}  // namespace dualswarm::workers
