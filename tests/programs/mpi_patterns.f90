! SPDX-License-Identifier: BSD-3-Clause
!
! mpi_patterns.f90 - the MPI communication patterns of tests/e2e/mpi-fortran.sh, through
! Open MPI's Fortran bindings (`use mpi`, and mpif.h in subroutine ring), each with a known
! ground truth that every rank prints at the end, as mpi_patterns.c does:
!   "truth RANK sends=N send_bytes=B recvs=N recv_bytes=B colls=N"
! (point-to-point messages this rank sent and received, collective calls it made), and a
! line of results that must not change under the tracer.
!   1. ping-pong between ranks 0 and 1 (MPI_SEND/MPI_RECV, 10 round trips, 1 KiB), half of
!      the receives with MPI_STATUS_IGNORE
!   2. a ring: each rank sends to the next and receives from the previous (MPI_SENDRECV)
!   3. non-blocking exchange with every other rank (MPI_ISEND/MPI_IRECV, MPI_WAITALL), the
!      receives posted with MPI_ANY_SOURCE; again with MPI_STATUSES_IGNORE
!   4. a non-blocking ring completed by MPI_WAIT (MPI_STATUS_IGNORE), MPI_TEST,
!      MPI_WAITANY, MPI_TESTALL, MPI_TESTANY, MPI_WAITSOME; 300 requests in one MPI_WAITALL
!   5. collectives on MPI_COMM_WORLD, MPI_IN_PLACE included
!   6. MPI_COMM_SPLIT into even and odd ranks, a ping inside each half, an allreduce there,
!      MPI_COMM_FREE
program mpi_patterns
    use mpi
    implicit none
    integer :: rank, size, ierr, i, p, n, cnt, nxt, prv, idx, half, hr, hs, v, r
    integer(8) :: sends = 0, send_bytes = 0, recvs = 0, recv_bytes = 0, colls = 0
    integer :: ibuf(1024), rbuf(1024, 0:63), reqs(128)
    integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 128), idxs(128)
    integer :: many(150), manyreqs(300)
    character(len=4096) :: cbuf
    double precision :: dsend(32), drecv(32)
    logical :: flag

    call MPI_INIT(ierr)
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
    ibuf = rank
    cbuf = repeat(achar(65 + rank), 4096)

    ! 1. ping-pong
    do i = 1, 10
        if (size < 2) exit
        if (rank == 0) then
            call MPI_SEND(ibuf, 256, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
            call sent(1024_8)
            call MPI_RECV(rbuf, 256, MPI_INTEGER, 1, 8, MPI_COMM_WORLD, st, ierr)
            call got(1024_8)
        else if (rank == 1) then
            if (mod(i, 2) == 0) then
                call MPI_RECV(rbuf, 256, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, &
                          MPI_STATUS_IGNORE, ierr)
            else
                call MPI_RECV(rbuf, 256, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, st, ierr)
            end if
            call got(1024_8)
            call MPI_SEND(ibuf, 256, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, ierr)
            call sent(1024_8)
        end if
    end do

    ! 2. ring (mpif.h)
    nxt = mod(rank + 1, size)
    prv = mod(rank + size - 1, size)
    call ring(rank, size, ibuf)
    call sent(400_8)
    call got(400_8)

    ! 3. non-blocking exchange, receives from any source: their sizes from the statuses
    n = 0
    do p = 0, size - 1
        if (p == rank .or. n >= 62) cycle
        n = n + 1
        call MPI_IRECV(rbuf(1, p), 64, MPI_CHARACTER, MPI_ANY_SOURCE, 33, MPI_COMM_WORLD, &
                   reqs(n), ierr)
    end do
    do p = 0, size - 1
        if (p == rank .or. n >= 124) cycle
        n = n + 1
        call MPI_ISEND(cbuf, 8 * (rank + 1), MPI_CHARACTER, p, 33, MPI_COMM_WORLD, reqs(n), ierr)
        call sent(int(8 * (rank + 1), 8))
    end do
    call MPI_WAITALL(n, reqs, sts, ierr)
    do i = 1, size - 1
        call MPI_GET_COUNT(sts(:, i), MPI_CHARACTER, cnt, ierr)
        call got(int(cnt, 8))
    end do
    !    again, the statuses ignored: 16 integers from each
    n = 0
    do p = 0, size - 1
        if (p == rank .or. n >= 62) cycle
        n = n + 1
        call MPI_IRECV(rbuf(1, p), 16, MPI_INTEGER, p, 34, MPI_COMM_WORLD, reqs(n), ierr)
        call got(64_8)
    end do
    do p = 0, size - 1
        if (p == rank .or. n >= 124) cycle
        n = n + 1
        call MPI_ISEND(ibuf, 16, MPI_INTEGER, p, 34, MPI_COMM_WORLD, reqs(n), ierr)
        call sent(64_8)
    end do
    call MPI_WAITALL(n, reqs, MPI_STATUSES_IGNORE, ierr)

    ! 4. a non-blocking ring: the receive completed by MPI_WAIT, the send by MPI_TEST
    dsend = rank
    call MPI_IRECV(drecv, 32, MPI_DOUBLE_PRECISION, prv, 41, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISEND(dsend, 32, MPI_DOUBLE_PRECISION, nxt, 41, MPI_COMM_WORLD, reqs(2), ierr)
    call sent(256_8)
    call MPI_WAIT(reqs(1), MPI_STATUS_IGNORE, ierr)
    call got(256_8)
    flag = .false.
    do while (.not. flag)
        call MPI_TEST(reqs(2), flag, st, ierr)
    end do
    !    and both by MPI_WAITANY
    call MPI_IRECV(drecv, 8, MPI_DOUBLE_PRECISION, prv, 42, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISEND(dsend, 8, MPI_DOUBLE_PRECISION, nxt, 42, MPI_COMM_WORLD, reqs(2), ierr)
    call sent(64_8)
    do i = 1, 2
        call MPI_WAITANY(2, reqs, idx, st, ierr)
    end do
    call got(64_8)
    !    MPI_TESTALL (statuses ignored), MPI_TESTANY, MPI_WAITSOME, each after a barrier
    call MPI_IRECV(drecv, 4, MPI_DOUBLE_PRECISION, prv, 43, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISEND(dsend, 4, MPI_DOUBLE_PRECISION, nxt, 43, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr) ! every send started: few tests to spin
    colls = colls + 1
    call sent(32_8)
    call got(32_8)
    flag = .false.
    do while (.not. flag)
        call MPI_TESTALL(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
    end do
    call MPI_IRECV(drecv, 2, MPI_DOUBLE_PRECISION, prv, 44, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISEND(dsend, 2, MPI_DOUBLE_PRECISION, nxt, 44, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr) ! every send started: few tests to spin
    colls = colls + 1
    call sent(16_8)
    call got(16_8)
    n = 0
    do while (n < 2)
        call MPI_TESTANY(2, reqs, idx, flag, MPI_STATUS_IGNORE, ierr)
        if (flag .and. idx /= MPI_UNDEFINED) n = n + 1
    end do
    call MPI_IRECV(drecv, 1, MPI_DOUBLE_PRECISION, prv, 45, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISEND(dsend, 1, MPI_DOUBLE_PRECISION, nxt, 45, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr) ! every send started: few tests to spin
    colls = colls + 1
    call sent(8_8)
    call got(8_8)
    n = 0
    do while (n < 2)
        call MPI_WAITSOME(2, reqs, cnt, idxs, sts, ierr)
        n = n + cnt
    end do
    !    300 requests at once (more than the wrappers keep on the stack), statuses ignored
    do i = 1, 150
        call MPI_IRECV(many(i), 1, MPI_INTEGER, prv, 46, MPI_COMM_WORLD, manyreqs(i), ierr)
        call got(4_8)
    end do
    do i = 1, 150
        call MPI_ISEND(ibuf(i), 1, MPI_INTEGER, nxt, 46, MPI_COMM_WORLD, manyreqs(150 + i), ierr)
        call sent(4_8)
    end do
    call MPI_WAITALL(300, manyreqs, MPI_STATUSES_IGNORE, ierr)

    ! 5. collectives
    v = rank
    r = 0
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call MPI_BCAST(cbuf, 256, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
    call MPI_REDUCE(v, r, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call MPI_ALLREDUCE(v, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    r = rank + 1
    call MPI_ALLREDUCE(MPI_IN_PLACE, r, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    call MPI_GATHER(ibuf, 4, MPI_INTEGER, rbuf, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call MPI_ALLTOALL(ibuf, 4, MPI_INTEGER, rbuf, 4, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    colls = colls + 7

    ! 6. split
    call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
    call MPI_COMM_RANK(half, hr, ierr)
    call MPI_COMM_SIZE(half, hs, ierr)
    if (hs > 1) then
        if (hr == 0) then
            call MPI_SEND(cbuf, 50, MPI_CHARACTER, 1, 5, half, ierr)
            call sent(50_8)
        else if (hr == 1) then
            call MPI_RECV(cbuf, 50, MPI_CHARACTER, 0, 5, half, MPI_STATUS_IGNORE, ierr)
            call got(50_8)
        end if
    end if
    call MPI_ALLREDUCE(v, p, 1, MPI_INTEGER, MPI_SUM, half, ierr)
    colls = colls + 1
    call MPI_COMM_FREE(half, ierr)

    write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') 'truth ', rank, ' sends=', sends, &
        ' send_bytes=', send_bytes, ' recvs=', recvs, ' recv_bytes=', recv_bytes, &
        ' colls=', colls
    write (*, '(a,i0,a,i0,a,i0,a,f6.1,a,a)') 'result ', rank, ' max=', r, ' half_sum=', p, &
        ' ring=', drecv(1), ' bcast=', cbuf(1:4)
    call MPI_FINALIZE(ierr)

contains

    subroutine sent(bytes)
        integer(8), intent(in) :: bytes
        sends = sends + 1
        send_bytes = send_bytes + bytes
    end subroutine sent

    subroutine got(bytes)
        integer(8), intent(in) :: bytes
        recvs = recvs + 1
        recv_bytes = recv_bytes + bytes
    end subroutine got

end program mpi_patterns

! The ring through mpif.h: 100 integers to the next rank, from the previous one.
subroutine ring(rank, size, buf)
    implicit none
    include 'mpif.h'
    integer, intent(in) :: rank, size
    integer, intent(inout) :: buf(1024)
    integer :: rbuf(100), st(MPI_STATUS_SIZE), ierr
    call MPI_SENDRECV(buf, 100, MPI_INTEGER, mod(rank + 1, size), 21, rbuf, 100, MPI_INTEGER, &
              mod(rank + size - 1, size), 21, MPI_COMM_WORLD, st, ierr)
    buf(1) = rbuf(1)
end subroutine ring
