"""ImageNet-1k classes → plain everyday words ("Egyptian cat" → "a cat", 118 breeds → "a dog").

Why: a frame description is matched against questions people type, and people say "the
cat", "a dog", "the bus", never "tiger cat" or "Walker hound". The classifier also spreads
its belief over many fine classes of one kind (five cats, 118 dogs, a dozen cars), so the
*sum* over a plain word is both more often right and more often confident than any single
fine class: the describer thresholds that sum (see memory/vision.py).

The table is written by hand from the class list (ImageNet-1k orders classes by WordNet
synset id, so most kinds sit in contiguous index ranges: dogs 151–268, cats 281–285). Classes
that name a *pattern* rather than a thing (chain mail, honeycomb, window screen, velvet,
nematode, maze …) map to ``None``: on video they fire on any busy texture, stripes or grain
and almost never mean that object, so they are never said.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# (plain word, class indices). Ranges are inclusive; an index may appear once only.
_R = range


def _ix(*parts: int | range) -> list[int]:
    out: list[int] = []
    for p in parts:
        out.extend(list(p) if isinstance(p, range) else [p])
    return out


HYPERNYM_GROUPS: list[tuple[str, list[int]]] = [
    # -- animals ------------------------------------------------------------------------
    ("a fish", _ix(0, 1, _R(389, 398))),
    ("a shark", _ix(_R(2, 5))),
    ("a ray", _ix(5, 6)),
    ("a bird", _ix(_R(7, 25), _R(80, 101), _R(127, 147))),
    ("a salamander", _ix(_R(25, 30))),
    ("a frog", _ix(_R(30, 33))),
    ("a turtle", _ix(_R(33, 38))),
    ("a lizard", _ix(_R(38, 49))),
    ("a crocodile", _ix(49, 50)),
    ("a dinosaur", _ix(51)),
    ("a snake", _ix(_R(52, 69))),
    ("a spider", _ix(70, _R(72, 78))),
    ("a scorpion", _ix(71)),
    ("an insect", _ix(78, 79, _R(308, 321))),
    ("an elephant", _ix(101, 385, 386)),
    ("a kangaroo", _ix(104)),
    ("a koala", _ix(105)),
    ("a jellyfish", _ix(107)),
    ("a sea creature", _ix(108, 109, 115, 116, 117, _R(327, 330))),
    ("a snail", _ix(112, 113, 114)),
    ("a crab", _ix(_R(118, 122), 125)),
    ("a lobster", _ix(_R(122, 125))),
    ("a whale", _ix(147, 148)),
    ("a seal", _ix(149, 150)),
    ("a dog", _ix(_R(151, 269))),
    ("a wolf", _ix(_R(269, 276))),
    ("a hyena", _ix(276)),
    ("a fox", _ix(_R(277, 281))),
    ("a cat", _ix(_R(281, 286))),
    ("a big cat", _ix(_R(286, 294))),
    ("a bear", _ix(_R(294, 298))),
    ("a beetle", _ix(_R(300, 308))),
    ("a butterfly", _ix(_R(321, 327))),
    ("a rabbit", _ix(_R(330, 333))),
    ("a rodent", _ix(333, 335, 336, 337, 338)),
    ("a hedgehog", _ix(334)),
    ("a horse", _ix(339, 603)),
    ("a zebra", _ix(340)),
    ("a pig", _ix(_R(341, 344))),
    ("a hippo", _ix(344)),
    ("a cow", _ix(_R(345, 348))),
    ("a sheep or goat", _ix(_R(348, 351))),
    ("an antelope", _ix(_R(351, 354))),
    ("a camel", _ix(354, 355)),
    ("a small animal", _ix(298, 299, 102, 103, 106, _R(356, 364))),
    ("a sloth", _ix(364)),
    ("an ape", _ix(_R(365, 370))),
    ("a monkey", _ix(_R(370, 385))),
    ("a panda", _ix(387, 388)),
    # -- vehicles -------------------------------------------------------------------------
    ("a car", _ix(436, 468, 475, 479, 511, 535, 581, 609, 627, 656, 661, 751, 817, 573)),
    ("an ambulance", _ix(407)),
    ("a truck", _ix(555, 569, 586, 675, 717, 734, 864, 867)),
    ("a bus", _ix(654, 779, 874)),
    ("a train", _ix(466, 547, 565, 705, 820, 829)),
    ("a camper van", _ix(660, 757)),
    ("a tractor", _ix(595, 730, 856, 866)),
    ("a boat", _ix(472, 484, 554, 576, 625, 693, 694, 814, 871, 914)),
    ("a ship", _ix(403, 510, 628, 724, 780, 833)),
    ("an aeroplane", _ix(404, 895, 908)),
    ("an airship", _ix(405)),
    ("a rocket", _ix(657, 744, 812)),
    ("a bicycle", _ix(444, 671, 870, 880)),
    ("a motorbike", _ix(665, 670)),
    ("a snowmobile", _ix(802, 803)),
    ("a sled", _ix(450, 537)),
    ("a cart", _ix(428, 612, 690, 791)),
    ("a forklift", _ix(561)),
    # -- screens, devices -----------------------------------------------------------------
    ("a screen", _ix(664, 782, 851, 916)),
    ("a computer", _ix(527, 590, 620, 681)),
    ("a keyboard", _ix(508, 810, 878)),
    ("a computer mouse", _ix(673)),
    ("a phone", _ix(487, 528, 707)),
    ("a camera", _ix(732, 759, 622)),
    ("a music player", _ix(481, 482, 485, 605, 848, 754)),
    ("a loudspeaker", _ix(632)),
    ("a microphone", _ix(650)),
    ("a printer", _ix(713, 742)),
    ("a projector", _ix(745)),
    ("a remote control", _ix(761, 613)),
    ("a clock", _ix(409, 530, 892, 604, 835)),
    ("a watch", _ix(531, 826)),
    # -- text, signs --------------------------------------------------------------------------
    ("a sign", _ix(919, 458, 781)),
    ("a page of text", _ix(917, 921, 922, 446)),
    ("a traffic light", _ix(920)),
    ("a parking meter", _ix(704)),
    # -- people's things ------------------------------------------------------------------
    ("clothes", _ix(399, 400, 411, 445, 451, 457, 459, 465, 474, 501, 552, 568, 578, 601, 608,
                    610, 614, 617, 638, 639, 652, 655, 689, 697, 735, 775, 824, 834, 841, 842,
                    869, 887, 906, 443, 658, 806, 529)),
    ("a hat", _ix(433, 439, 452, 515, 667, 793, 808)),
    ("a helmet", _ix(518, 560, 715, 570)),
    ("shoes", _ix(502, 514, 630, 770, 774)),
    ("glasses", _ix(836, 837, 447)),
    ("a bag", _ix(414, 636, 748, 728, 797, 893)),
    ("armour", _ix(461, 490, 524, 787)),
    ("a mask", _ix(643, 796)),
    ("jewellery", _ix(679, 584)),
    ("an umbrella", _ix(879)),
    # -- music ------------------------------------------------------------------------------
    ("a guitar", _ix(402, 546, 420)),
    ("a piano", _ix(579, 881)),
    ("a violin", _ix(486, 889)),
    ("a drum", _ix(541, 822, 542)),
    ("a musical instrument", _ix(401, 432, 494, 513, 558, 566, 577, 593, 594, 641, 642, 683,
                                 684, 687, 699, 776, 875)),
    # -- buildings, places ----------------------------------------------------------------
    ("a shop", _ix(415, 424, 454, 467, 509, 582, 788, 860, 865)),
    ("a building", _ix(410, 425, 449, 483, 497, 500, 538, 580, 663, 668, 698, 727, 743, 832,
                       853, 858, 915, 442)),
    ("a library", _ix(624)),
    ("a cinema", _ix(498)),
    ("a restaurant", _ix(762)),
    ("a bridge", _ix(821, 839, 888)),
    ("a fence", _ix(489, 716, 912)),
    ("a wall", _ix(825)),
    ("a tower", _ix(437, 900, 682, 863, 557)),
    ("a monument", _ix(649, 873)),
    ("a fountain", _ix(562)),
    ("a dock", _ix(536, 718, 460)),
    ("a dam", _ix(525)),
    ("a stage", _ix(819, 854)),
    ("a tent", _ix(672)),
    ("a window", _ix(799, 905, 789)),
    # -- furniture, home ----------------------------------------------------------------
    ("a chair", _ix(423, 559, 765, 857)),
    ("a table", _ix(526, 532, 736)),
    ("a bed", _ix(431, 516, 520, 564, 750, 721)),
    ("a sofa", _ix(831)),
    ("a cupboard", _ix(453, 492, 493, 495, 548, 553, 648, 894)),
    ("a lamp", _ix(470, 619, 818, 846, 862)),
    ("a fan or heater", _ix(545, 753, 811)),
    ("a bathroom", _ix(435, 794, 804, 861, 896, 999)),
    ("a kitchen appliance", _ix(534, 550, 651, 760, 766, 827, 859, 891, 897, 521)),
    ("a pot or pan", _ix(469, 505, 544, 567, 849, 909)),
    ("a bowl", _ix(659, 809)),
    ("a plate", _ix(923, 729)),
    ("a bin", _ix(412)),
    ("a vacuum cleaner", _ix(882)),
    ("a box", _ix(478, 519, 771)),
    ("a basket", _ix(588, 790)),
    ("a bucket", _ix(463, 427, 756, 876)),
    ("a vase", _ix(883, 738)),
    ("a teddy bear", _ix(850)),
    ("a toy", _ix(719, 723)),
    ("a swing", _ix(843)),
    ("a carousel", _ix(476)),
    # -- tools, objects ------------------------------------------------------------------
    ("a tool", _ix(477, 491, 512, 587, 596, 600, 726, 740, 783, 784, 792, 677, 499, 473,
                   623, 813, 910, 618, 840, 462, 731)),
    ("a gun", _ix(413, 471, 763, 764)),
    ("a pen", _ix(418, 563, 749, 709, 710, 767, 696)),
    ("a ruler", _ix(769, 798)),
    ("a lock", _ix(507, 695)),
    ("a ball", _ix(429, 430, 522, 574, 722, 746, 768, 805, 852, 890)),
    ("sports equipment", _ix(416, 422, 543, 602, 702, 747, 752, 795, 801)),
    ("a parachute", _ix(701)),
    ("a balloon", _ix(417)),
    ("a flag", _ix(733)),
    ("a tripod", _ix(872)),
    ("a bottle", _ix(440, 720, 737, 898, 899, 901, 907, 585, 631, 711, 838, 653)),
    ("a cup", _ix(504, 967, 968, 969, 647)),
    ("a glass", _ix(441, 572, 966)),
    ("a syringe", _ix(845)),
    ("medical equipment", _ix(823, 830, 678, 691, 523, 419)),
    ("a mailbox", _ix(637)),
    ("a vending machine", _ix(886, 480, 571)),
    ("a safety pin", _ix(772)),
    ("a satellite dish", _ix(755, 807)),
    # -- food ------------------------------------------------------------------------------
    ("food", _ix(_R(924, 930), _R(933, 936), _R(959, 966))),
    ("bread", _ix(930, 931, 932)),
    ("vegetables", _ix(_R(936, 947), 987, 998)),
    ("fruit", _ix(_R(948, 958), 988, 989, 990)),
    ("a mushroom", _ix(947, _R(991, 998))),
    # -- nature -------------------------------------------------------------------------------
    ("mountains", _ix(970, 972, 976, 979, 980)),
    ("a shore", _ix(975, 977, 978)),
    ("a coral reef", _ix(973)),
    ("a geyser", _ix(974)),
    ("flowers", _ix(984, 985, 986)),
    ("hay", _ix(958)),
    # -- people (the only person classes ImageNet has) ---------------------------------------
    ("a person", _ix(981, 982, 983)),
]

# A coarser word for when the network cannot settle on a kind but is sure of the category
# (a cartoon rabbit spread over "dog", "bird" and "seal"; a street over car/truck/tram).
# Plain words of a category and every unlisted class in its index range belong to it.
CATEGORIES: list[tuple[str, list[int]]] = [
    ("an animal", _ix(_R(0, 398))),
    ("a vehicle", _ix(403, 404, 405, 407, 408, 436, 444, 450, 466, 468, 472, 484, 510, 511, 537,
                      547, 554, 555, 561, 565, 569, 573, 575, 576, 586, 595, 603, 609, 612, 625,
                      627, 628, 654, 656, 660, 661, 665, 670, 671, 675, 690, 705, 717, 724, 734,
                      751, 757, 779, 780, 802, 803, 814, 817, 820, 829, 833, 847, 864, 866, 867,
                      870, 871, 874, 880, 895, 914)),
    ("food", _ix(_R(924, 970))),
]

# Words that only mean something when a person is in the frame: the clothing classes
# ("jersey", "Windsor tie", "sweatshirt") also fire on stripes and busy textures, so the
# describer says "clothes" only when the face/person detectors found someone.
PERSON_WORDS: frozenset[str] = frozenset({"clothes"})

# Classes that name a surface pattern or are near-meaningless on video: never said.
PATTERN_CLASSES: frozenset[int] = frozenset(
    _ix(
        110, 111,  # flatworm, nematode: thin curvy lines, grain
        69,  # trilobite: ridged textures
        506,  # coil, spiral
        488,  # chain
        599,  # honeycomb
        646,  # maze
        611,  # jigsaw puzzle
        885,  # velvet
        911,  # wool
        904,  # window screen
        815,  # spider web
        971,  # bubble
        918,  # crossword: any grid
        539,  # doormat
        533,  # dishrag
        591,  # handkerchief
        741,  # prayer rug
        700,  # paper towel
        884,  # vault (ceiling)
        616,  # knot
        680,  # nipple
        408,  # amphibious vehicle: fires on murky water textures
        640,  # manhole cover
        455,  # bottlecap
        692,  # packet
        868,  # tray
        549,  # envelope: any pale rectangle
        464,  # buckle
    )
)


def _article(label: str) -> str:
    word = label.split(" ")[0].lower()
    if word[:1] in "aeiou" and not word.startswith(("uni", "eu", "one")):
        return "an " + label
    return "a " + label


@lru_cache(maxsize=4)
def _table(names: tuple[str, ...]) -> tuple[tuple[str | None, ...], tuple[str, ...]]:
    """(hypernym per class, the distinct hypernyms in first-seen order)."""
    if len(names) != 1000:
        raise ValueError(f"expected the 1000 ImageNet-1k class names, got {len(names)}")
    table: list[str | None] = [None] * 1000
    for word, idx in HYPERNYM_GROUPS:
        for i in idx:
            if table[i] is None and i not in PATTERN_CLASSES:
                table[i] = word
    for i, name in enumerate(names):
        if table[i] is None and i not in PATTERN_CLASSES:
            table[i] = _article(name)  # a class of its own ("a street sign" style)
    words = tuple(dict.fromkeys(w for w in table if w is not None))
    return tuple(table), words


def hypernym_of(names: list[str] | tuple[str, ...]) -> list[str | None]:
    """The plain word of each class (``None``: a pattern class, never said)."""
    return list(_table(tuple(names))[0])


class HypernymIndex:
    """Sums class probabilities into plain words with one matrix product.

    ``words`` lists the plain words, then the coarse categories (``CATEGORIES``);
    ``matrix`` is (1000, len(words)) with a 1 where a class belongs to a word, so a class
    counts once for its plain word and once for its category. Pattern classes belong to
    none: their probability mass is simply not attributed to anything. ``category_of``
    maps a plain word to its category, when it has one.
    """

    def __init__(self, names: list[str] | tuple[str, ...]) -> None:
        table, plain = _table(tuple(names))
        categories = [c for c, _ in CATEGORIES]
        self.words: tuple[str, ...] = tuple(plain) + tuple(categories)
        self.class_word: tuple[str | None, ...] = table
        self.names = tuple(names)
        self.column = {w: j for j, w in enumerate(self.words)}
        self.matrix = np.zeros((1000, len(self.words)), dtype=np.float32)
        for i, w in enumerate(table):
            if w is not None:
                self.matrix[i, self.column[w]] = 1.0
        self.category_of: dict[str, str] = {}
        for category, idx in CATEGORIES:
            for i in idx:
                if table[i] is not None:
                    self.matrix[i, self.column[category]] = 1.0
                    self.category_of.setdefault(table[i], category)
        self.is_category = np.array([w in categories for w in self.words])

    def group_probs(self, probs: np.ndarray) -> np.ndarray:
        """(n, 1000) class probabilities → (n, len(words)) summed per word."""
        return probs @ self.matrix
