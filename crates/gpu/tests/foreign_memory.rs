//! Memory another library owns, borrowed in place: checked against the
//! driver's record of the allocation, written through, never freed.

use warpmc_gpu::GpuError;

#[test]
fn borrowed_memory_is_used_in_place_and_left_allocated() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("borrowed_memory_is_used_in_place_and_left_allocated") else {
        return;
    };
    let values: Vec<u32> = (0..1000).collect();
    // Stands for another library's allocation: its address is all that is
    // handed over.
    let owner = gpu.upload(&values).unwrap();
    let address = owner.address();

    let info = gpu.pointer_info(address).unwrap();
    assert_eq!(info.ordinal, gpu.ordinal());
    assert!(!info.managed);
    assert!(info.range.0 <= address && address + 4000 <= info.range.0 + info.range.1, "{info:?}");

    {
        // Elements 10..110, written through the borrow.
        // SAFETY: 100 u32 inside `owner`, which outlives the borrow; nothing
        // else touches them meanwhile.
        let mut middle = unsafe { gpu.borrow_device_memory::<u32>(address + 40, 100) }.unwrap();
        assert_eq!(middle.len(), 100);
        gpu.copy_to_device(&[7u32; 100], &mut middle).unwrap();
        assert_eq!(gpu.download(&middle).unwrap(), vec![7u32; 100]);
    }
    // The borrow is gone and the memory is still the owner's, changed.
    gpu.synchronize().unwrap();
    let after = gpu.download(&owner).unwrap();
    assert_eq!(&after[..10], &values[..10]);
    assert!(after[10..110].iter().all(|&v| v == 7));
    assert_eq!(&after[110..], &values[110..]);
}

#[test]
fn borrowing_what_is_not_device_memory_is_an_error() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("borrowing_what_is_not_device_memory_is_an_error") else { return };
    let owner = gpu.upload(&[1u64; 64]).unwrap();
    let address = owner.address();
    let message = |r: Result<warpmc_gpu::BorrowedBuffer<u64>, GpuError>| match r {
        Err(GpuError::InvalidArgument(m)) => m,
        Err(e) => panic!("not an argument error: {e}"),
        Ok(_) => panic!("borrowed what it should not"),
    };
    let host = vec![0u64; 64];
    // SAFETY: each borrow below is checked before anything is touched, and
    // refused, so nothing is.
    let e = message(unsafe { gpu.borrow_device_memory::<u64>(host.as_ptr() as u64, 64) });
    assert!(e.contains("not CUDA device memory"), "{e}");
    // SAFETY: as above.
    let e = message(unsafe { gpu.borrow_device_memory::<u64>(address + 4, 1) });
    assert!(e.contains("not aligned"), "{e}");
    // SAFETY: as above (a terabyte: beyond any allocation).
    let e = message(unsafe { gpu.borrow_device_memory::<u64>(address, 1 << 37) });
    assert!(e.contains("past the end of their allocation"), "{e}");
    // An empty borrow needs no address (empty arrays of other libraries
    // may have none).
    // SAFETY: no element is ever read or written.
    let empty = unsafe { gpu.borrow_device_memory::<u64>(0, 0) }.unwrap();
    assert!(empty.is_empty());
}

#[test]
fn other_streams_can_be_waited_for() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("other_streams_can_be_waited_for") else { return };
    assert_ne!(gpu.stream_handle(), 0);
    // SAFETY: 1 and 2 name the default streams; the handle is this GPU's
    // own live stream.
    unsafe {
        gpu.wait_for_stream(1).unwrap();
        gpu.wait_for_stream(2).unwrap();
        gpu.wait_for_stream(gpu.stream_handle()).unwrap();
    }
}
