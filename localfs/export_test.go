package localfs

// SetLockWaitHook lets the external tests know when a Lock starts waiting.
func SetLockWaitHook(f func()) { lockWaitHook = f }
