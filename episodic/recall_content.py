"""What the fuzzy-recall set (:mod:`episodic.recall_generator`) is made of, split by split.

A theme is one recording's story: an opening line that *says* its topic and tone (and a title
slide that *shows* it), five moments, a closing line, one non-speech sound and one phrase worth
remembering ("forty minutes"). The memory only knows what it hears, reads and sees, so every
word a description leans on is spoken, written on screen or pictured. Each moment carries
loose noun phrases for the key-moment facet (``keys``: synonyms and hypernyms, never the spoken
sentence) and short topic phrases for temporal clues about its neighbours (``gists``).

Themes come in **twins**: two recordings with different topics, tones, neighbours and sounds
that share one key moment (a sentence, a sign, a photo, or a photo with a sentence), so that
only the other facets tell them apart. Dev and held-out share nothing but the shape: themes,
sentences, pictures, sign texts and the description wordings (``DESCRIBE``) are split.
"""

from __future__ import annotations

from dataclasses import dataclass

from episodic.qa_content import Photo

SPLIT_SEED = {"dev": 1601, "heldout": 9161}
NOISE = {"dev": (("pink", 26.0), ("white", 22.0)), "heldout": (("brown", 24.0), ("babble", 20.0))}
SOUNDS = ("music", "engine", "applause")
POSITIONS = ("start", "middle", "end")


@dataclass(frozen=True)
class Part:
    """One scene's content: what is said (maybe nothing), shown, and how people recall it."""

    said: str = ""
    keys: tuple[str, ...] = ()  # key-moment phrases ("a cat on the kitchen counter")
    gists: tuple[str, ...] = ()  # what it was about, for "then they talked about …"
    visual: str = "texture"  # texture | sign | slide | photo (qa_render's visuals)
    text: str = ""  # the sign or slide text
    photo: Photo | None = None


@dataclass(frozen=True)
class RecallTheme:
    key: str
    impressions: tuple[str, ...]  # global-impression phrases: topic and tone
    intro: Part
    outro: Part
    parts: tuple[Part, ...]
    said_clue: tuple[int, str]  # (index into parts, a phrase that part says)
    sound: str  # music | engine | applause, a stretch without speech
    sound_at: str  # start | middle | end
    series: str = ""  # the theme whose opening, closing and impressions this one shares ("" = its own)

    @property
    def frame_key(self) -> str:
        """Whose opening and closing lines these are: the same words are the same part."""
        return self.series or self.key


@dataclass(frozen=True)
class Twins:
    """Two themes that share ``shared``, a key moment only their other facets tell apart."""

    a: RecallTheme
    b: RecallTheme
    shared: Part


def _p(said: str, keys: str, gists: str, visual: str = "texture", text: str = "",
       photo: Photo | None = None) -> Part:
    return Part(said, tuple(keys.split("|")) if keys else (), tuple(gists.split("|")), visual, text, photo)


def _t(key: str, impressions: str, intro: tuple[str, str, str], outro: tuple[str, str],
       parts: tuple[Part, ...], clue: tuple[int, str], sound: str) -> RecallTheme:
    said, title, gists = intro
    kind, at = sound.split("@")
    return RecallTheme(key, tuple(impressions.split("|")), _p(said, "", gists, "slide", title),
                       _p(outro[0], "", outro[1]), parts, clue, kind, at)


CAT = Photo("chelsea", "a cat", ("cat", "kitten"))
ROCKET = Photo("rocket", "a rocket", ("rocket",))
CUP = Photo("coffee", "a cup of coffee", ("cup", "coffee", "mug"))
ASTRONAUT = Photo("astronaut", "an astronaut", ("astronaut", "person", "space suit"))

THEMES: dict[str, tuple[Twins | RecallTheme, ...]] = {
    "dev": (
        Twins(
            _t("baking", "a cheerful baking vlog|a happy video of someone making a birthday cake|an upbeat cake baking video",
               ("Hi everyone, welcome back to my kitchen! Today we are baking a birthday cake, and I am so happy.",
                "BIRTHDAY CAKE", "the plan to bake a birthday cake|what they were going to bake"),
               ("That was so much fun, thank you for baking with me, see you next week!", "saying goodbye|the sign-off"),
               (_p("First I mix the butter and the sugar until it is really fluffy.", "someone creaming butter with sugar|whisking butter and sugar together", "mixing the butter and sugar|creaming the butter"),
                _p("Now the eggs go in, one at a time, and then the flour.", "eggs and flour going into a bowl|adding eggs one by one", "adding the eggs|putting in the flour"),
                _p("The oven is at one hundred and eighty degrees, so this bakes for forty minutes.", "the cake going into a hot oven|how long the cake needs to bake", "the baking time|how hot the oven was"),
                _p("Chocolate icing is my favourite part, look how shiny it is!", "spreading glossy chocolate frosting|the chocolate topping", "the icing|the chocolate frosting"),
                _p("Twelve candles on top, and the cake is finished.", "candles being put on the cake|finishing the cake with candles", "the candles|decorating the top")),
               (2, "forty minutes"), "music@start"),
            _t("hygiene", "a serious food safety talk|a stern lecture about hygiene in a restaurant kitchen|a sober training video on kitchen safety",
               ("Good morning. This is a serious talk about food safety in a restaurant kitchen.",
                "FOOD SAFETY", "the introduction to food safety|what the training was about"),
               ("Please take these rules seriously. Inspections start on Monday.", "the coming inspections|the final warning"),
               (_p("Raw chicken must never touch the same board as the salad.", "a warning about raw meat near vegetables|keeping poultry away from salad", "raw chicken|cross contamination"),
                _p("Wash your hands for at least twenty seconds before every task.", "a hand washing notice|the rule about washing hands", "hand washing", "sign", "WASH YOUR HANDS"),
                _p("The fridge must stay below five degrees at all times.", "checking how cold the fridge is|the fridge temperature rule", "the fridge temperature|keeping the fridge cold"),
                _p("Every knife goes back on the magnetic rack after use.", "putting blades back on a rack|where the knives are stored", "the knives|where the knives go"),
                _p("Fire blankets are next to the exit door.", "where the fire blanket hangs|emergency equipment by the door", "the fire blanket|fire safety")),
               (1, "twenty seconds"), "applause@end"),
            _p("Look who jumped up here, the cat is sitting on the counter again.",
               "a cat sitting on the kitchen counter|a kitty up on the worktop|the pet on the counter",
               "the cat on the counter", "photo", photo=CAT)),
        Twins(
            _t("garden", "a calm garden tour|a relaxing walk through a vegetable garden|a peaceful gardening video",
               ("Welcome to my quiet little garden. Let us take a slow, peaceful walk through the vegetable beds.",
                "GARDEN TOUR", "the welcome to the garden|the start of the garden walk"),
               ("Thank you for strolling with me, enjoy the calm of your own garden.", "the goodbye|the thanks for walking along"),
               (_p("These runner beans have climbed all the way up the fence.", "bean plants climbing a fence|tall climbing vegetables", "the runner beans|the bean plants"),
                _p("I water the lettuce early, before the sun gets too strong.", "watering salad plants in the morning|giving the lettuce a drink", "watering the lettuce"),
                _p("The compost heap is warm, which means it is working.", "a warm pile of compost|checking on the compost", "the compost heap"),
                _p("We planted thirty strawberry plants along this path.", "a row of strawberries beside a path|berry plants lining a walkway", "the strawberry plants"),
                _p("A robin is watching me from the apple tree.", "a small bird in a fruit tree|a robin looking down from a tree", "the robin|the bird in the tree")),
               (3, "thirty strawberry plants"), "music@middle"),
            _t("market", "a busy market report|a lively video from a crowded farmers market|a hectic morning at a farmers market",
               ("Good morning from the busy Saturday farmers market, it is packed and noisy today!",
                "FARMERS MARKET", "the welcome to the market|how crowded the market was"),
               ("That is it from the market, grab your shopping bags and come early!", "the advice to come early|the goodbye"),
               (_p("The cheese stall has a queue all the way to the fountain.", "a long line at the cheese stand|people waiting for cheese", "the cheese stall queue"),
                _p("Honey is eight pounds a jar this week.", "the price of honey|jars of honey for sale", "the honey price|the honey"),
                _p("The baker sold out of sourdough before nine o'clock.", "the bread running out early|a bakery stand selling out", "the sourdough selling out|the bread"),
                _p("A man with an accordion is playing by the entrance.", "a street musician with an accordion|someone busking at the gate", "the accordion player"),
                _p("Free samples of apple juice are handed out at the last stall.", "free juice being handed out|a juice tasting", "the apple juice samples")),
               (1, "eight pounds"), "engine@start"),
            _p("", "a sign advertising fresh tomatoes|a board that said fresh tomatoes|a tomato sign",
               "the tomato sign", "sign", "FRESH TOMATOES")),
        Twins(
            _t("seaside", "an excited travel vlog about a train trip to the sea|a thrilled video of a train ride to the seaside|an enthusiastic train travel vlog",
               ("We are finally going on our seaside trip by train, I am so excited!",
                "SEASIDE TRIP", "the start of the seaside trip|how excited they were"),
               ("We have arrived, the beach is waiting, bye for now!", "arriving at the beach|the goodbye"),
               (_p("I packed sandwiches, sun cream and a big beach towel.", "packing a picnic and a towel|what went into the beach bag", "what they packed|the beach bag"),
                _p("Look out of the window, you can already see the sea!", "the first view of the ocean from a window|the sea appearing outside", "the sea view"),
                _p("The journey takes two hours and fifteen minutes.", "how long the ride lasts|the travel time", "the length of the journey"),
                _p("The conductor just stamped our tickets with a smile.", "a friendly ticket inspector|tickets being checked", "the tickets|the conductor"),
                _p("We are going to build the biggest sandcastle ever.", "plans for a huge sandcastle|big beach building plans", "the sandcastle plan")),
               (2, "two hours and fifteen minutes"), "engine@start"),
            _t("commute", "an annoyed rant about late trains|a frustrated video about a delayed commute|a grumpy vlog about train delays",
               ("Another terrible morning commute. I am so annoyed, the trains are late again.",
                "DELAYS AGAIN", "the complaint about late trains|how annoyed they were"),
               ("I am writing a complaint tonight, this cannot go on.", "the complaint letter|the angry ending"),
               (_p("The coffee machine on the platform is broken, of course.", "a broken drinks machine at the station|no coffee on the platform", "the broken coffee machine"),
                _p("My train is delayed by thirty five minutes.", "a long wait for a late train|the train running late", "the delay"),
                _p("Everyone is squeezed together under the tiny shelter in the rain.", "people crowded under a shelter in the rain|a packed bus stop roof", "the rain|the crowded shelter"),
                _p("I will be late for the budget meeting with my boss.", "worrying about missing a work meeting|being late for the office", "the meeting|being late for work"),
                _p("They are giving out free bottles of water to say sorry.", "free water handed out as an apology|staff apologising with drinks", "the free water")),
               (1, "thirty five minutes"), "music@middle"),
            _p("Attention please, the next departure leaves from platform nine.",
               "an announcement about platform nine|a station announcement naming the platform|a departure called on platform nine",
               "the platform announcement")),
        Twins(
            _t("museum", "a curious visit to a science museum|an inquisitive museum tour vlog|a video wandering around a science museum full of wonder",
               ("Today I am exploring the science museum, and I am so curious about the space hall.",
                "SCIENCE MUSEUM", "the arrival at the museum|the plan to see the space hall"),
               ("What an interesting day, I learned so much.", "what they learned|the goodbye"),
               (_p("This steam engine from eighteen thirty still works.", "an old working steam engine|a very old machine that still runs", "the steam engine"),
                _p("You can touch a real piece of a meteorite here.", "touching a space rock|a meteorite you can put your hand on", "the meteorite"),
                _p("The planetarium show starts every fifteen minutes.", "show times for the dome theatre|when the star show runs", "the planetarium show"),
                _p("Kids are racing paper planes in the flight gallery.", "children flying paper aeroplanes|a paper plane contest", "the paper planes"),
                _p("The gift shop sells freeze dried ice cream for space travellers.", "odd ice cream in the museum shop|space food for sale", "the gift shop|the space ice cream")),
               (2, "every fifteen minutes"), "applause@middle"),
            _t("lesson", "an enthusiastic space lesson in a classroom|a lively science class about space|a teacher's excited lesson on planets and rockets",
               ("Good morning class! Today's lesson is all about space, and I am really excited to teach it.",
                "SPACE LESSON", "the start of the lesson|what the class was about"),
               ("Great work everyone, see you after the break.", "the end of the class|the break"),
               (_p("Mars is called the red planet because of the rusty dust.", "why Mars looks red|the rusty planet", "Mars|the red planet"),
                _p("Please open your workbooks at page forty two.", "pupils opening their exercise books|turning to a page in the workbook", "the workbooks"),
                _p("Saturn's rings are made of ice and rock.", "what the rings of Saturn are made of|ringed planet facts", "Saturn's rings"),
                _p("For homework, draw the eight planets in order.", "homework about drawing planets|a drawing task for home", "the homework"),
                _p("Who can tell me how far away the moon is?", "a quiz question about the moon|asking the class about the moon", "the distance to the moon")),
               (1, "page forty two"), "music@start"),
            _p("", "a photo of a rocket|a picture of a space rocket|a rocket on screen", "the rocket picture",
               "photo", photo=ROCKET)),
        _t("bike", "a calm bike repair tutorial|a patient how-to video about fixing a flat bicycle tyre|a quiet cycling repair lesson",
           ("In this calm and simple tutorial I will show you how to fix a bicycle puncture.",
            "BIKE REPAIR", "what the tutorial would show|the introduction"),
           ("And that is it, your bike is ready to ride again.", "the bike being ready|the goodbye"),
           (_p("First take the wheel off and let out the rest of the air.", "removing a bicycle wheel|letting the air out", "taking the wheel off"),
            _p("Use two tyre levers to pull the tyre off the rim.", "prying the tyre off with levers|levering the rubber off the rim", "the tyre levers"),
            _p("Find the hole by putting the tube in a bowl of water.", "looking for bubbles in a bowl of water|finding the leak in water", "finding the hole", "sign", "FIND THE LEAK"),
            _p("The patch needs five minutes to dry.", "waiting for the patch to dry|glue drying on the tube", "the patch"),
            _p("Pump the tyre up until it feels firm again.", "inflating the wheel with a pump|pumping air back in", "pumping the tyre")),
           (3, "five minutes"), "engine@end"),
        _t("jazz", "a joyful outdoor jazz concert|a happy live music evening in a park|a cheerful jazz night outdoors",
           ("Good evening everyone, welcome to our joyful little jazz concert in the park!",
            "JAZZ NIGHT", "the welcome to the concert|the opening words"),
           ("Thank you for listening, have a wonderful night!", "the thanks to the audience|the goodbye"),
           (_p("Our drummer Leo just flew in from Chicago.", "a drummer arriving from America|the drummer's long trip", "the drummer"),
            _p("This next song is about a rainy Tuesday.", "a song about bad weather on a weekday|the story behind a tune", "the rainy Tuesday song"),
            _p("Please give a warm welcome to our trumpet player.", "introducing the trumpeter|a horn player coming on stage", "the trumpet player"),
            _p("Tickets for next month are only ten dollars.", "cheap tickets for the next show|the price of next month's tickets", "the ticket price"),
            _p("Food trucks are parked by the big oak tree.", "food vans under a large tree|where to get food", "the food trucks")),
           (3, "ten dollars"), "applause@end"),
    ),
    "heldout": (
        Twins(
            _t("launch", "a proud product launch presentation|a confident company event unveiling a new smartwatch|an upbeat gadget launch",
               ("Hello everyone, I am very proud to present our new smart watch at today's launch.",
                "LAUNCH DAY", "the welcome to the launch|the new watch being announced"),
               ("Thank you all for coming, we cannot wait for you to try it.", "the thanks to the guests|the closing words"),
               (_p("The battery now lasts for nine days on a single charge.", "how long the battery holds up|the battery life claim", "the battery life"),
                _p("It measures your heart rate and your sleep.", "health tracking features|pulse and sleep monitoring", "heart rate and sleep tracking"),
                _p("The strap comes in green, silver and midnight blue.", "the colours of the wrist band|band colour choices", "the strap colours"),
                _p("Pre-orders open tomorrow morning on our website.", "when you can order it online|the online pre-sale", "pre-orders"),
                _p("Our design team spent two years on this.", "the long design effort|years of work by designers", "the design team")),
               (0, "nine days"), "applause@end"),
            _t("budget", "a tense budget meeting|a frustrated office meeting about money problems|an irritated team discussing a budget shortfall",
               ("Right, this budget meeting is going to be tough, and frankly I am frustrated with these numbers.",
                "BUDGET MEETING", "the start of the meeting|how frustrated the boss was"),
               ("Let us meet again next week, and please come prepared.", "the next meeting|the closing request"),
               (_p("We spent far too much on travel this year.", "overspending on trips|travel costs getting out of hand", "the travel costs"),
                _p("The printer contract costs us three thousand a month.", "an expensive printing deal|what the copier contract costs", "the printer contract"),
                _p("Marketing wants more money, and we simply do not have it.", "the marketing team asking for extra cash|a request for a bigger budget", "the marketing budget"),
                _p("Nobody answered my emails about the overtime hours.", "complaints about ignored messages|unanswered mail about extra hours", "overtime|the unanswered emails"),
                _p("We will cut the team lunch on Fridays.", "cancelling the weekly team meal|no more Friday lunches", "the Friday lunch")),
               (1, "three thousand a month"), "engine@middle"),
            _p("Let me get everyone a cup of coffee before we begin.",
               "someone fetching coffee for everybody|a hot drink offered before things started|coffee for the room",
               "the coffee", "photo", photo=CUP)),
        Twins(
            _t("camping", "a relaxed camping vlog by a lake|a laid-back video of a weekend camping trip|a chilled out lakeside camping video",
               ("Good morning from our lakeside campsite, it is slow, sunny and very relaxing here.",
                "LAKESIDE CAMP", "the morning at the campsite|how relaxing it was"),
               ("Time for a nap in the sun, take it easy everyone.", "the nap|the goodbye"),
               (_p("I am making pancakes on the little gas stove.", "cooking breakfast on a camping stove|pancakes over a small burner", "the pancakes"),
                _p("The lake is so still you can see the mountains in it.", "hills mirrored in calm water|a reflection on the lake", "the reflection on the lake"),
                _p("We paddled the canoe for three kilometres this morning.", "a morning boat trip|paddling a canoe", "the canoe"),
                _p("A family of ducks just walked past our tent.", "birds waddling past the tent|ducks near the campsite", "the ducks"),
                _p("Tonight we will look at the stars from the hammock.", "plans for stargazing|lying in a hammock at night", "the stars|the hammock")),
               (2, "three kilometres"), "music@start"),
            _t("storm", "a worried video about an approaching storm|an anxious storm preparation update|a nervous vlog before a big storm",
               ("I am honestly worried, a big storm is heading for the valley tonight.",
                "STORM WARNING", "the storm warning|how worried they were"),
               ("Stay safe everyone, I will post again when the storm has passed.", "staying safe|the promise of an update"),
               (_p("We tied down the tents with extra ropes.", "securing the tents|more rope on the shelters", "the extra ropes"),
                _p("The wind could reach ninety kilometres per hour.", "a forecast of very strong gusts|how fast the wind might get", "the wind speed"),
                _p("The ranger told everyone to move their cars away from the trees.", "moving vehicles out from under trees|the park warden's advice", "the ranger's advice|the cars"),
                _p("We filled every bottle with drinking water just in case.", "storing water in bottles|filling up containers", "the drinking water"),
                _p("The power might go off, so we charged the torches.", "charging flashlights|getting lamps ready for a blackout", "the torches|the flashlights")),
               (1, "ninety kilometres per hour"), "engine@end"),
            _p("", "a sign forbidding campfires|a no fires notice|a board saying fires were not allowed",
               "the campfire sign", "sign", "NO CAMPFIRES")),
        Twins(
            _t("garage", "a patient car repair tutorial|a slow step by step video about fixing an old car|a careful car maintenance walkthrough",
               ("In this patient, step by step repair video we will look at an old family car.",
                "CAR REPAIR", "the introduction to the repair|the old car"),
               ("Take your time, and your car will thank you.", "taking your time|the closing advice"),
               (_p("First, check the oil level with the dipstick.", "measuring the engine oil|pulling out the dipstick", "the oil level"),
                _p("These brake pads are down to two millimetres.", "worn out brakes|very thin brake pads", "the brake pads"),
                _p("Loosen the wheel nuts before you lift the car.", "undoing the bolts on a wheel|loosening the lug nuts", "the wheel nuts"),
                _p("The jack goes under this metal point, never the plastic.", "where to put the lifting jack|jacking the car up safely", "the jack"),
                _p("Always tighten the nuts in a star pattern.", "tightening bolts crosswise|doing up the wheel in a star shape", "tightening the nuts")),
               (1, "two millimetres"), "engine@start"),
            _t("roadtrip", "a cheerful road trip vlog|a happy video of friends driving to the mountains|a fun sunny road trip video",
               ("Road trip day! We are driving to the mountains and everyone is in a great mood.",
                "ROAD TRIP", "the start of the road trip|the good mood"),
               ("Best day ever, see you on the next adventure!", "the next adventure|the goodbye"),
               (_p("We are singing along to every song on the radio.", "singing in the car|a car full of singing", "the singing"),
                _p("Our first stop is a tiny bakery with famous cinnamon buns.", "stopping for sweet pastries|a bakery break", "the cinnamon buns|the bakery stop"),
                _p("The mountain pass is still two hundred kilometres away.", "how far the mountains still are|the distance left", "how far the mountains were"),
                _p("Look at those goats standing on the rocks!", "animals on the cliffs by the road|goats on a rocky slope", "the goats"),
                _p("We found a lovely picnic spot next to a waterfall.", "lunch beside a waterfall|a picnic by falling water", "the picnic|the waterfall")),
               (2, "two hundred kilometres"), "music@middle"),
            _p("Oh no, the front tyre is completely flat.",
               "discovering a flat tyre|the front wheel losing all its air|finding a puncture on the front wheel",
               "the flat tyre")),
        Twins(
            _t("planetarium", "an awe inspiring talk about life in space|a wonder filled planetarium lecture on astronauts|a moving talk about living on a space station",
               ("Welcome to the planetarium. Tonight's talk is about the wonder and beauty of living in space.",
                "LIFE IN SPACE", "the welcome under the dome|what the talk was about"),
               ("Thank you for joining us under the dome tonight.", "the thanks at the end|the closing words"),
               (_p("Astronauts sleep in sleeping bags tied to the wall.", "how people sleep in orbit|bedtime on a space station", "sleeping in space"),
                _p("The station goes around the Earth sixteen times a day.", "how often the station circles the planet|orbits in one day", "orbits per day"),
                _p("Water floats in little balls when there is no gravity.", "floating drops of water|liquid drifting in zero gravity", "floating water"),
                _p("Their muscles get weaker, so they exercise two hours daily.", "daily workouts in orbit|keeping muscles strong up there", "exercise in space"),
                _p("From up there, the Earth looks thin and fragile.", "the view of our planet from above|how delicate Earth looks", "the view of Earth")),
               (1, "sixteen times a day"), "applause@end"),
            _t("costume", "a fun fancy dress party video|a silly costume party with friends|a playful dress up party vlog",
               ("Welcome to our silly fancy dress party, this is going to be so much fun!",
                "FANCY DRESS", "the welcome to the party|how fun it would be"),
               ("Thanks for coming everyone, that was the silliest party ever!", "the thanks to the guests|the goodbye"),
               (_p("Sam came dressed as a giant banana.", "someone in a fruit costume|a person dressed as a banana", "the banana costume"),
                _p("The pizza arrives in twenty minutes.", "waiting for food to be delivered|the pizza on its way", "the pizza"),
                _p("We are playing musical chairs in the garden.", "a party game with chairs|musical chairs outside", "musical chairs"),
                _p("Grandma won the prize for the best pirate hat.", "an award for a pirate costume|a grandmother winning a prize", "the pirate hat prize"),
                _p("Somebody spilled lemonade all over the dance floor.", "a drink spilled on the dance floor|a sticky mess where people dance", "the spilled lemonade")),
               (1, "twenty minutes"), "music@middle"),
            _p("", "a photo of an astronaut|a picture of someone in a space suit|a person in a spacesuit on screen",
               "the astronaut picture", "photo", photo=ASTRONAUT)),
        _t("pottery", "a calm pottery class|a quiet video about shaping clay|a soothing ceramics lesson",
           ("Welcome to a calm and gentle pottery class, today we shape a bowl from clay.",
            "POTTERY CLASS", "the welcome to the class|what they would make"),
           ("Let the bowl dry for a week, and enjoy the quiet.", "drying the bowl|the closing words"),
           (_p("Wet your hands before you touch the clay.", "getting hands damp first|preparing to handle clay", "wet hands"),
            _p("Press your thumbs into the middle to open it up.", "pushing thumbs into the clay|opening the centre", "opening the bowl"),
            _p("Keep the wheel turning slowly and steadily.", "a slowly spinning potter's wheel|the wheel speed", "the wheel"),
            _p("The kiln heats up to twelve hundred degrees.", "how hot the oven for clay gets|firing temperature", "the kiln"),
            _p("A blue glaze will make it shine.", "a shiny blue coating|choosing the glaze colour", "the glaze")),
           (3, "twelve hundred degrees"), "music@start"),
        _t("football", "an exciting local football match commentary|a tense report from a village football game|a thrilling amateur football match",
           ("What a tense and exciting afternoon at the village football match!",
            "CUP FINAL", "the start of the match|how exciting it was"),
           ("The final whistle has gone, what a game!", "the final whistle|the end of the game"),
           (_p("The goalkeeper just saved a penalty with his left hand.", "a great save from a spot kick|the keeper stopping a penalty", "the penalty save"),
            _p("It is still nil nil after seventy minutes.", "no goals for a long time|the score still level", "the score"),
            _p("The referee showed a yellow card to number eleven.", "a player getting booked|a caution from the referee", "the yellow card"),
            _p("The rain has made the pitch very muddy.", "a wet and muddy field|rain spoiling the grass", "the muddy pitch"),
            _p("Their striker scored with a header from a corner.", "a goal with the head|scoring from a corner kick", "the header")),
           (1, "seventy minutes"), "applause@end"),
    ),
}

# -- how people describe what they half remember ------------------------------------------------
# {g} a global impression, {k} a key moment, {x} a neighbour's gist, {s} a sound, {p} where in
# the recording, {q} a remembered phrase. The two splits share no wording.
DESCRIBE: dict[str, dict[str, tuple[str, ...]]] = {
    "dev": {
        "global": ("I'm looking for {g}.", "It was {g}, I think.", "Some recording, {g}."),
        "global_key": ("I'm after {g} where there's {k}.", "It was {g} with {k} somewhere in it."),
        "key": ("There's a moment with {k}.", "I remember {k}.", "At one point there was {k}."),
        "after": ("Then they talked about {x}.", "After that it moved on to {x}."),
        "before": ("Before that, they talked about {x}.", "Earlier on it was about {x}."),
        "start": ("That was near the start.", "It happened early on."),
        "end": ("That was near the end.", "It came late in the video."),
        "sound": ("There was {s}{p}.", "I heard {s}{p}."),
        "said": ("Someone said {q}.", "I think someone mentioned {q}."),
    },
    "heldout": {
        "global": ("Trying to find {g}.", "Pretty sure it was {g}.", "The recording was {g}."),
        "global_key": ("Looking for {g} featuring {k}.", "Maybe {g}, and it showed {k}."),
        "key": ("It had {k}.", "I recall {k} in it.", "There was a bit with {k}."),
        "after": ("Right after, someone talked about {x}.", "Later they got to {x}."),
        "before": ("Just before it, the topic was {x}.", "Prior to that, someone covered {x}."),
        "start": ("This was right at the beginning.", "It sits early in the recording."),
        "end": ("This was towards the end.", "It was close to the finish."),
        "sound": ("I recall hearing {s}{p}.", "You could hear {s}{p}."),
        "said": ("Somebody mentioned {q}.", "I remember someone saying {q}."),
    },
}
SOUND_WORDS = {
    "dev": {"music": ("music", "a song"), "engine": ("an engine", "a motor running"),
            "applause": ("applause", "people clapping")},
    "heldout": {"music": ("a tune", "some music playing"), "engine": ("a motor", "an engine running"),
                "applause": ("clapping", "a round of applause")},
}
PLACE_WORDS = {
    "dev": {"start": " at the start", "middle": " somewhere in the middle", "end": " near the end"},
    "heldout": {"start": " in the opening", "middle": " halfway through", "end": " at the very end"},
}
