#include "textflag.h"
#include "go_asm.h"

// Distinct negative dwords for the lanes that score nothing, so that
// VPCONFLICTD finds no conflict with them.
DATA scoreNone<>+0(SB)/4, $-1
DATA scoreNone<>+4(SB)/4, $-2
DATA scoreNone<>+8(SB)/4, $-3
DATA scoreNone<>+12(SB)/4, $-4
DATA scoreNone<>+16(SB)/4, $-5
DATA scoreNone<>+20(SB)/4, $-6
DATA scoreNone<>+24(SB)/4, $-7
DATA scoreNone<>+28(SB)/4, $-8
GLOBL scoreNone<>(SB), RODATA|NOPTR, $32

// func scoreAVX512(a *scoreArgs)
//
// Per eight postings (slot, tf): the slots and tfs split into dwords
// (VPMOVQD), stop unless every slot is below maxDoc; the lengths loaded
// (the postings' own, in order) and the refs gathered, the lanes that
// score (K4) those with a length >= 0 (and a ref below maxRef); stop if two of them have the same entry e of dst
// (VPCONFLICTD, the others holding distinct negative values); dst[e]
// gathered (taken as 0 when fresh), s = (w*tf) / ((tf+c0) + (c1*dl))
// with separate products, sums and quotient as Go computes it, the
// entries where dst[e] was 0 compressed to the front of a zmm and stored
// at touched[k] (all eight quadwords: touched has room for every posting
// left) and k moved past them, dst[e] + s scattered back and its lanes'
// greatest kept in Z26 (stored to top at the end).
TEXT ·scoreAVX512(SB), NOSPLIT, $0-8
	MOVQ         a+0(FP), AX
	MOVQ         scoreArgs_ps(AX), SI
	MOVQ         scoreArgs_n(AX), CX
	MOVQ         scoreArgs_lens(AX), R8
	MOVQ         scoreArgs_refs(AX), R9
	MOVQ         scoreArgs_dst(AX), R10
	MOVQ         scoreArgs_touched(AX), R11
	MOVQ         scoreArgs_fresh(AX), R12
	MOVQ         scoreArgs_nolist(AX), R13
	VPBROADCASTD scoreArgs_maxDoc(AX), Y20
	VPBROADCASTD scoreArgs_maxRef(AX), Y21
	VBROADCASTSD scoreArgs_w(AX), Z22
	VBROADCASTSD scoreArgs_c0(AX), Z23
	VBROADCASTSD scoreArgs_c1(AX), Z24
	VMOVDQU32    scoreNone<>(SB), Y25
	VPXORQ       Z30, Z30, Z30 // zero
	VPXORQ       Z26, Z26, Z26 // greatest value written, per lane
	XORQ         DX, DX        // k
	XORQ         BX, BX        // postings done

scoreLoop:
	VMOVDQU64 (SI)(BX*8), Z0
	VPMOVQD   Z0, Y1           // slots
	VPSRLQ    $32, Z0, Z0
	VPMOVQD   Z0, Y2           // tfs
	VPCMPUD   $1, Y20, Y1, K1  // slot < maxDoc
	KMOVW     K1, DI
	CMPL      DI, $0xff
	JNE       scoreStop
	VMOVDQU32 (R8)(BX*4), Y3   // lengths
	VPCMPD    $5, Y30, Y3, K4  // length >= 0
	TESTQ     R9, R9
	JZ        scoreBySlot
	KXNORW    K3, K3, K3
	VPXORD    Y4, Y4, Y4
	VPGATHERDD (R9)(Y1*4), K3, Y4 // refs
	VPCMPUD   $1, Y21, Y4, K4, K4 // and ref < maxRef (unsigned: no ref is -1)
	JMP       scoreEntries

scoreBySlot:
	VMOVDQA32 Y1, Y4

scoreEntries:
	// Y4 holds the entries e, K4 the lanes that score. Entries in
	// ascending order (as the callers' refs mostly are) are distinct;
	// else VPCONFLICTD (microcoded, slow) looks for two equal ones.
	VALIGND     $7, Y4, Y4, Y5  // e of the lane before
	VPCMPD      $6, Y5, Y4, K5  // e > that
	KMOVW       K5, DI
	ORL         $1, DI
	CMPL        DI, $0xff
	JNE         scoreConflicts

scoreDistinct:
	VPXORQ      Z7, Z7, Z7
	TESTQ       R12, R12
	JNZ         scoreFresh          // dst[e] is 0: not read
	KMOVW       K4, K6
	VGATHERDPD  (R10)(Y4*8), K6, Z7 // dst[e]

scoreFresh:
	VCVTDQ2PD   Y2, Z8              // tf
	VCVTDQ2PD   Y3, Z9              // dl
	VMULPD      Z22, Z8, Z10        // w*tf
	VADDPD      Z23, Z8, Z11        // tf + c0
	VMULPD      Z24, Z9, Z12        // c1*dl
	VADDPD      Z12, Z11, Z11       // (tf + c0) + c1*dl
	VDIVPD      Z11, Z10, Z10       // s
	VCMPPD      $0, Z30, Z7, K4, K5 // scoring, dst[e] == 0
	TESTQ       R13, R13
	JNZ         scoreUnlisted
	VPMOVZXDQ   Y4, Z13
	VPCOMPRESSQ Z13, K5, Z13
	VMOVDQU64   Z13, (R11)(DX*8)
	KMOVW       K5, DI
	POPCNTL     DI, DI
	ADDQ        DI, DX

scoreUnlisted:
	VADDPD      Z10, Z7, Z7         // dst[e] + s
	VMAXPD      Z7, Z26, K4, Z26    // the greatest value written
	VSCATTERDPD Z7, K4, (R10)(Y4*8)
	ADDQ        $8, BX
	CMPQ        BX, CX
	JLT         scoreLoop
	JMP         scoreStop

scoreConflicts:
	VMOVDQA32   Y25, Y5
	VMOVDQA32   Y4, K4, Y5
	VPCONFLICTD Y5, Y6
	VPTESTMD    Y6, Y6, K5
	KORTESTW    K5, K5
	JZ          scoreDistinct

scoreStop:
	VMOVUPD Z26, scoreArgs_top(AX)
	MOVQ DX, scoreArgs_k(AX)
	MOVQ BX, scoreArgs_done(AX)
	VZEROUPPER
	RET
