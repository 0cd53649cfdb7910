/* SPDX-License-Identifier: BSD-3-Clause */
#include "slowpath/storms.h"

#include "slowpath/microcode.h"
#include "slowpath/storm_ram.h"
#include "base/log.h"

namespace cna::fw {

using namespace hsi::reg;
using hsi::StormStatus;

namespace {

const char* status_name(StormStatus s)
{
    switch (s) {
    case StormStatus::halted: return "halted";
    case StormStatus::running: return "running";
    case StormStatus::bad_microcode: return "bad_microcode";
    case StormStatus::bad_version: return "bad_version";
    case StormStatus::asserted: return "asserted";
    }
    return "?";
}

} // namespace

bool Storms::read(uint32_t addr, uint32_t& value) const
{
    switch (addr) {
    case STORM_FW_CRC: value = fw_crc_; return true;
    case STORM_FW_LEN: value = fw_len_; return true;
    case STORM_START: value = 0; return true;
    case STORM_STATUS: value = status_.load(); return true;
    default: return false;
    }
}

bool Storms::write(uint32_t addr, uint32_t value)
{
    switch (addr) {
    case STORM_FW_CRC: fw_crc_ = value; return true;
    case STORM_FW_LEN: fw_len_ = value; return true;
    case STORM_START:
        if (value & 1)
            start();
        return true;
    case STORM_STATUS: return true; /* read-only */
    default: return false;
    }
}

void Storms::start()
{
    uint32_t microcode = STORM_MICROCODE - STORM_RAM_BASE;
    uint32_t len = fw_len_ <= STORM_MICROCODE_MAX ? fw_len_ : 0;
    StormStatus status = verify_microcode(ram_.at(microcode), len, fw_crc_);
    status_.store(static_cast<uint32_t>(status), std::memory_order_release);
    log(status == StormStatus::running ? LogLevel::info : LogLevel::err, "storms: microcode of %u bytes: %s",
        fw_len_, status_name(status));
    if (status == StormStatus::running && assert_fault_.load())
        assert_now();
}

void Storms::set_assert_fault(bool on)
{
    assert_fault_.store(on);
    if (on && running())
        assert_now();
}

void Storms::assert_now()
{
    status_.store(static_cast<uint32_t>(StormStatus::asserted), std::memory_order_release);
    assert_event_.store(true, std::memory_order_release);
    log(LogLevel::err, "storms: firmware assert");
}

} // namespace cna::fw
