// The readout block walker on packets written as byte literals from the format
// (docs/architecture.md §5.1): each block starts `fiber u8, fen u8, data_length u16
// little-endian`.
#include "efu/ess/readout_blocks.h"

#include <vector>

#include <gtest/gtest.h>

namespace efu::ess {
namespace {

struct Seen {
  std::uint8_t fiber;
  std::uint8_t fen;
  std::uint16_t length;
  std::uint8_t first_payload;
};

class Walk {
 public:
  Walk(std::uint16_t fixed_size) : walker(counters, fixed_size) {}
  std::vector<Seen> run(const std::vector<std::uint8_t>& bytes) {
    std::vector<Seen> out;
    walker.walk(bytes.data(), static_cast<std::uint32_t>(bytes.size()), [&](const ReadoutBlock& b) {
      out.push_back(Seen{b.fiber, b.fen, b.length, b.data[4]});
    });
    return out;
  }
  std::uint64_t value(const char* name) const { return counters.value(name); }
  CounterRegistry counters;
  ReadoutBlockWalker walker;
};

TEST(ReadoutBlockWalker, FixedSizeBlocksAreHandedOverInOrder) {
  Walk w(8);
  const std::vector<std::uint8_t> bytes = {
      0x02, 0x01, 0x08, 0x00, 0xA1, 0xA2, 0xA3, 0xA4,  // fiber 2, fen 1, length 8
      0x03, 0x00, 0x08, 0x00, 0xB1, 0xB2, 0xB3, 0xB4,  // fiber 3, fen 0, length 8
  };
  const auto seen = w.run(bytes);
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].fiber, 2);
  EXPECT_EQ(seen[0].fen, 1);
  EXPECT_EQ(seen[0].length, 8);
  EXPECT_EQ(seen[0].first_payload, 0xA1);
  EXPECT_EQ(seen[1].fiber, 3);
  EXPECT_EQ(seen[1].first_payload, 0xB1);
  EXPECT_EQ(w.value("readouts.received"), 2U);
  EXPECT_EQ(w.value("readouts.errors.length"), 0U);
  EXPECT_EQ(w.value("readouts.errors.truncated"), 0U);
}

TEST(ReadoutBlockWalker, FixedSizeWrongLengthIsCountedAndSteppedOver) {
  Walk w(8);
  const std::vector<std::uint8_t> bytes = {
      0x02, 0x01, 0x07, 0x00, 0xA1, 0xA2, 0xA3, 0xA4,  // length 7: wrong for this format
      0x03, 0x00, 0x08, 0x00, 0xB1, 0xB2, 0xB3, 0xB4,  // still found at the next stride
      0x04, 0x00, 0x00, 0x01, 0xC1, 0xC2, 0xC3, 0xC4,  // length 256: wrong
  };
  const auto seen = w.run(bytes);
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].first_payload, 0xB1);
  EXPECT_EQ(w.value("readouts.received"), 3U);
  EXPECT_EQ(w.value("readouts.errors.length"), 2U);
}

TEST(ReadoutBlockWalker, FixedSizeShortTailIsTruncated) {
  Walk w(8);
  const std::vector<std::uint8_t> bytes = {
      0x02, 0x01, 0x08, 0x00, 0xA1, 0xA2, 0xA3, 0xA4,  // good
      0x03, 0x00, 0x08, 0x00, 0xB1,                    // 5 bytes left of an 8-byte block
  };
  EXPECT_EQ(w.run(bytes).size(), 1U);
  EXPECT_EQ(w.value("readouts.received"), 2U);
  EXPECT_EQ(w.value("readouts.errors.truncated"), 1U);
}

TEST(ReadoutBlockWalker, VariableSizeStepsByEachBlocksLength) {
  Walk w(0);
  const std::vector<std::uint8_t> bytes = {
      0x01, 0x00, 0x06, 0x00, 0xA1, 0xA2,                          // 6 bytes
      0x05, 0x02, 0x0A, 0x00, 0xB1, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6,  // 10 bytes
      0x06, 0x03, 0x05, 0x00, 0xC1,                                // 5 bytes
  };
  const auto seen = w.run(bytes);
  ASSERT_EQ(seen.size(), 3U);
  EXPECT_EQ(seen[0].length, 6);
  EXPECT_EQ(seen[1].fiber, 5);
  EXPECT_EQ(seen[1].fen, 2);
  EXPECT_EQ(seen[1].length, 10);
  EXPECT_EQ(seen[1].first_payload, 0xB1);
  EXPECT_EQ(seen[2].first_payload, 0xC1);
  EXPECT_EQ(w.value("readouts.received"), 3U);
}

TEST(ReadoutBlockWalker, VariableSizeLengthBelowTheBlockHeaderEndsThePacket) {
  Walk w(0);
  const std::vector<std::uint8_t> bytes = {
      0x01, 0x00, 0x06, 0x00, 0xA1, 0xA2,  // good
      0x01, 0x00, 0x03, 0x00, 0xA1, 0xA2,  // length 3 < 4: the next start is unknown
      0x01, 0x00, 0x06, 0x00, 0xA1, 0xA2,  // not reached
  };
  EXPECT_EQ(w.run(bytes).size(), 1U);
  EXPECT_EQ(w.value("readouts.errors.length"), 1U);
  EXPECT_EQ(w.value("readouts.received"), 2U);
}

TEST(ReadoutBlockWalker, VariableSizeBlockPastThePacketEndIsTruncated) {
  Walk w(0);
  const std::vector<std::uint8_t> bytes = {
      0x01, 0x00, 0x06, 0x00, 0xA1, 0xA2,  // good
      0x01, 0x00, 0x20, 0x00, 0xA1, 0xA2,  // claims 32 bytes, 6 are left
  };
  EXPECT_EQ(w.run(bytes).size(), 1U);
  EXPECT_EQ(w.value("readouts.errors.truncated"), 1U);
  EXPECT_EQ(w.value("readouts.errors.length"), 0U);
}

TEST(ReadoutBlockWalker, VariableSizeTailShorterThanABlockHeaderIsTruncated) {
  Walk w(0);
  const std::vector<std::uint8_t> bytes = {0x01, 0x00, 0x06, 0x00, 0xA1, 0xA2, 0x01, 0x00, 0x06};
  EXPECT_EQ(w.run(bytes).size(), 1U);
  EXPECT_EQ(w.value("readouts.errors.truncated"), 1U);
}

TEST(ReadoutBlockWalker, EmptyPayloadIsNothing) {
  Walk w(20);
  EXPECT_TRUE(w.run({}).empty());
  EXPECT_EQ(w.value("readouts.received"), 0U);
}

TEST(ReadoutBlockWalker, CountersTakeTheGivenPrefix) {
  CounterRegistry counters;
  ReadoutBlockWalker walker(counters, 4, "caen.blocks.");
  const std::vector<std::uint8_t> bytes = {0x00, 0x00, 0x05, 0x00};
  walker.walk(bytes.data(), 4,
              [](const ReadoutBlock&) { FAIL() << "a bad block was handed over"; });
  EXPECT_EQ(counters.value("caen.blocks.received"), 1U);
  EXPECT_EQ(counters.value("caen.blocks.errors.length"), 1U);
}

// walk_lanes: the runs of two whole 4-byte blocks to on_lanes in one call (which reports one
// wrong length among them), the block after the last run to on_block, and a 2-byte tail: the
// counters as walk()'s.
TEST(ReadoutBlockWalker, WalkLanesHandsOverWholeRunsThenSingleBlocks) {
  CounterRegistry counters;
  ReadoutBlockWalker walker(counters, 4);
  const std::vector<std::uint8_t> bytes = {
      0x01, 0x00, 0x04, 0x00,  // run 1: fiber 1
      0x02, 0x00, 0x05, 0x00,  //        fiber 2, length 5: the lanes say wrong
      0x03, 0x00, 0x04, 0x00,  // run 2: fiber 3
      0x04, 0x00, 0x04, 0x00,  //        fiber 4
      0x05, 0x00, 0x04, 0x00,  // no run of two left: on_block, fiber 5
      0x06, 0x00,              // a tail shorter than a block: truncated
  };
  std::vector<std::uint8_t> runs;     // the fiber of each block handed over in runs
  std::vector<std::uint8_t> singles;  // the fiber of each single block
  int calls = 0;
  walker.walk_lanes(
      bytes.data(), static_cast<std::uint32_t>(bytes.size()), 2,
      [&](const std::uint8_t* first, std::uint32_t n) {
        ++calls;
        std::uint32_t wrong = 0;
        for (std::uint32_t b = 0; b < 2 * n; ++b) {
          runs.push_back(first[4 * b]);
          wrong += first[4 * b + 2] != 4;
        }
        return wrong;
      },
      [&](const ReadoutBlock& b) { singles.push_back(b.fiber); });
  EXPECT_EQ(calls, 1);  // every whole run in one call
  EXPECT_EQ(runs, (std::vector<std::uint8_t>{1, 2, 3, 4}));
  EXPECT_EQ(singles, (std::vector<std::uint8_t>{5}));
  EXPECT_EQ(counters.value("readouts.received"), 6U);  // five blocks and the tail
  EXPECT_EQ(counters.value("readouts.errors.length"), 1U);
  EXPECT_EQ(counters.value("readouts.errors.truncated"), 1U);
}

}  // namespace
}  // namespace efu::ess
