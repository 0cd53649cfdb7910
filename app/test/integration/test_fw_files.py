"""The firmware search path: without fw_file=, the PMD loads the first of
cna_fw.bin and cna_fw_zipped.bin found in each directory of
$CNA_FIRMWARE_PATH, then /lib/firmware/cna, else the compiled-in image; the
log says which, and a bad file fails the probe naming it.
"""
import os
import shutil
import struct
import tempfile
import unittest

from harness.testpmd import TestPmd, build_dir, forward_stats, run_testpmd_once

SYSTEM_DIR = "/lib/firmware/cna"
HSI_MAJOR_OFFSET = 12  # hsi_init_image.h: ImageHeader.hsi_major


def built(name):
    return os.path.join(build_dir(), "firmware", name)


class FirmwareSearchPathTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cna-fw-")
        self.dirs = [os.path.join(self.tmp, d) for d in ("a", "b")]
        for d in self.dirs:
            os.mkdir(d)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def install(self, dir_index, name, data=None):
        path = os.path.join(self.dirs[dir_index], name)
        if data is None:
            shutil.copyfile(built(name), path)
        else:
            with open(path, "wb") as f:
                f.write(data)
        return path

    def env(self):
        return {"CNA_FIRMWARE_PATH": ":".join(self.dirs)}

    def assert_loads(self, expected_path, vdev="net_cna0", zipped=False):
        with TestPmd([vdev], env=self.env()) as tp:
            out = tp.startup_output
            self.assertIn(f"firmware '{expected_path}'", out)
            self.assertRegex(out, rf"firmware {expected_path}: [\d.]+ for HSI [\d.]+{' [(]zipped[)]' if zipped else ','}")
            self.assertEqual(tp.link(0)[0], "up")
            self.assertGreater(forward_stats(tp.run_forwarding(0.3))[0]["RX-packets"], 100)
            tp.quit()

    def assert_fails(self, *patterns):
        status, sig, out = run_testpmd_once(["net_cna0"], env=self.env())
        self.assertIsNone(sig, out)
        self.assertRegex(out, r"No probed ethernet devices|probe failed")
        for p in patterns:
            self.assertRegex(out, p)
        return out

    def test_plain_image_found_in_the_search_path(self):
        self.assert_loads(self.install(1, "cna_fw.bin"))

    def test_zipped_image_found_when_no_plain_one(self):
        self.assert_loads(self.install(0, "cna_fw_zipped.bin"), zipped=True)

    def test_plain_preferred_within_a_directory(self):
        self.install(1, "cna_fw_zipped.bin")
        self.assert_loads(self.install(1, "cna_fw.bin"))

    def test_earlier_directory_wins(self):
        self.install(1, "cna_fw.bin")
        self.assert_loads(self.install(0, "cna_fw_zipped.bin"), zipped=True)

    def test_fw_file_devarg_overrides_the_search_path(self):
        self.install(0, "cna_fw_zipped.bin")
        self.assert_loads(built("cna_fw.bin"), vdev=f"net_cna0,fw_file={built('cna_fw.bin')}")

    def test_compiled_in_image_when_nothing_is_found(self):
        if any(os.path.exists(os.path.join(SYSTEM_DIR, n)) for n in ("cna_fw.bin", "cna_fw_zipped.bin")):
            self.skipTest(f"{SYSTEM_DIR} holds an image on this machine")
        with TestPmd(["net_cna0"], env=self.env()) as tp:
            out = tp.startup_output
            self.assertRegex(out, r"firmware: the compiled-in image \(none of .*" + os.path.join(self.dirs[1], "cna_fw.bin"))
            self.assertIn(os.path.join(SYSTEM_DIR, "cna_fw_zipped.bin"), out)
            self.assertRegex(out, r"firmware compiled-in image: [\d.]+ for HSI")
            self.assertEqual(tp.link(0)[0], "up")
            tp.quit()

    def test_hsi_mismatch_names_the_file_and_both_versions(self):
        with open(built("cna_fw.bin"), "rb") as f:
            image = bytearray(f.read())
        major, minor = struct.unpack_from("BB", image, HSI_MAJOR_OFFSET)
        image[HSI_MAJOR_OFFSET] = major + 1
        path = self.install(0, "cna_fw.bin", bytes(image))
        self.assert_fails(rf"firmware {path} rejected \(HSI version mismatch\): built for HSI {major + 1}\.{minor}, "
                          rf"this driver speaks HSI {major}\.\d+")

    def test_unreadable_image_names_the_path(self):
        path = os.path.join(self.dirs[0], "cna_fw.bin")
        os.mkdir(path)  # present, but no file to read
        self.assert_fails(rf"cannot read firmware file '{path}'")


if __name__ == "__main__":
    unittest.main()
